import type { Command } from 'commander';

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
      const { schemaAction } = await import('../actions/schema.js');
      await schemaAction(options);
    });
}
