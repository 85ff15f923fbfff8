#!/usr/bin/env node
// Runs the TypeScript entry point through tsx (the project ships sources, not a build).
require('tsx/cjs');
require('../src/main.ts');
