#!/usr/bin/env node
// Writes openapi.json from the compiled route table and zod schemas (`npm run openapi` builds first).
const fs = require('node:fs');
const path = require('node:path');
const { buildOpenApiDocument } = require('../dist/src/adapters/http/openapi.js');

const file = path.join(__dirname, '..', 'openapi.json');
fs.writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), file)}`);
