{
  "targets": [
    {
      "target_name": "ed25519_batch",
      "sources": ["addon.c", "ed25519-batch.c", "sha512.c"],
      "cflags": ["-O3", "-std=gnu11", "-Wall", "-Wextra"],
      "cflags!": ["-O2"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
