// Immich's HTTP API: the client, wire types and server stubs in Generated/ are what swift-openapi-generator makes
// from openapi.yaml (Immich's spec filtered to the operations in openapi-generator-config.yaml); written by
// scripts/generate-immich-client and checked by scripts/test, never edited by hand.
