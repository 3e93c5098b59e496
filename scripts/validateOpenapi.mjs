#!/usr/bin/env node
// Validates an OpenAPI document with @apidevtools/swagger-parser (ESM only, hence a script): node scripts/validateOpenapi.mjs [file]
import SwaggerParser from '@apidevtools/swagger-parser';

const file = process.argv[2] ?? 'openapi.json';
try {
  const api = await SwaggerParser.validate(file);
  console.log(`${file}: valid OpenAPI ${api.openapi} (${Object.keys(api.paths).length} paths)`);
} catch (error) {
  console.error(`${file}: ${error.message}`);
  process.exit(1);
}
