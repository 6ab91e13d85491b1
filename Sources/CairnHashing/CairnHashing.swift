import CairnCore

// Filled in by its issue; see README "Architecture".
enum CairnHashingModule {}
