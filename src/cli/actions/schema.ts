import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { configJsonSchema, parseReferenceTable } from '../../config/json-schema.js';
import { findPackageRoot } from '../../mapping/default-mappings.js';
import { builtInConnectorNames, getBuiltInConnector } from '../../plugins/registry.js';

/** The work of `freight-sync schema` (options and help in commands/schema.ts, loaded only when it runs). */
export async function schemaAction(options: { output?: string }): Promise<void> {
  const text = `${JSON.stringify(await buildConfigJsonSchema(), null, 2)}\n`;
  if (options.output) {
    fs.writeFileSync(options.output, text);
    process.stderr.write(`wrote ${path.resolve(options.output)}\n`);
  } else {
    process.stdout.write(text);
  }
}

export async function buildConfigJsonSchema(): Promise<Record<string, unknown>> {
  const reference = path.join(findPackageRoot(), 'docs', 'configuration.md');
  const descriptions = fs.existsSync(reference) ? parseReferenceTable(fs.readFileSync(reference, 'utf8')) : new Map<string, string>();
  const connectorOptions = new Map<string, z.ZodType>();
  for (const name of builtInConnectorNames()) {
    const factory = await getBuiltInConnector(name);
    if (factory) connectorOptions.set(name, factory.configSchema as z.ZodType);
  }
  return configJsonSchema({ descriptions, connectorOptions });
}
