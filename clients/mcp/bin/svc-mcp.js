#!/usr/bin/env node
// The `svc-mcp` command: the compiled server (npm install at the repository root builds it).
require('../dist/index.js').run();
