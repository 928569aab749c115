import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { z } from 'zod';
import { configJsonSchema, parseReferenceTable } from '../../config/json-schema.js';
import { findPackageRoot } from '../../mapping/default-mappings.js';
import { builtInConnectorNames, getBuiltInConnector } from '../../plugins/registry.js';

/**
 * `freight-sync schema`: prints the JSON Schema of the configuration file, generated from the zod
 * schema that validates it, with each key's meaning from docs/configuration.md and each built-in
 * connector's options. For editor completion: save it and point the YAML language server at it.
 */
export function register(program: Command): void {
  program
    .command('schema')
    .description('Print the JSON Schema of the config file (for editor completion and checks).')
    .option('-o, --output <file>', 'write it to this file instead of stdout')
    .addHelpText(
      'after',
      '\nSave it beside the config and add this first line to the YAML file for completion and checks in editors\nthat use the YAML language server (VS Code, JetBrains, Neovim):\n  # yaml-language-server: $schema=./freight-sync.schema.json\n`validate-config` checks more than any schema can (references between sections, mappings, connectors).',
    )
    .action(async (options: { output?: string }) => {
      const text = `${JSON.stringify(await buildConfigJsonSchema(), null, 2)}\n`;
      if (options.output) {
        fs.writeFileSync(options.output, text);
        process.stderr.write(`wrote ${path.resolve(options.output)}\n`);
      } else {
        process.stdout.write(text);
      }
    });
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
