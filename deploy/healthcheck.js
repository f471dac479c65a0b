'use strict';
/* global process, fetch, AbortSignal -- run by Node.js (CommonJS) */
/**
 * The container's health check (the Containerfile's HEALTHCHECK, deploy/compose.yaml): exits 0
 * when GET URL answers 200 within two seconds, else 1. URL defaults to the gateway's /health
 * on this machine at SLIPWAY_PORT (8080). The runtime image has no curl or wget: Node.js is
 * what it holds.
 */
const url = process.argv[2] ?? `http://127.0.0.1:${process.env.SLIPWAY_PORT || 8080}/health`;
fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
  (response) => process.exit(response.status === 200 ? 0 : 1),
  () => process.exit(1),
);
