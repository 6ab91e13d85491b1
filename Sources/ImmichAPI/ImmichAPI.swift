// Immich's HTTP API: the client, wire types and server stubs are generated at build time by swift-openapi-generator's
// plugin from openapi.yaml (Immich's spec filtered to the operations in openapi-generator-config.yaml).
