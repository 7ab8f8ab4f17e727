import { MODEL_ALIASES } from '../internal/agent/model.js';
import { loadGlobalConfig } from '../internal/config/global.js';
import { resolvePaths } from '../internal/config/paths.js';
import { type ListedProvider, listProviders } from '../internal/config/provider-list.js';
import { maskSecrets } from '../internal/secrets.js';
import { stderr, stdout } from './stdio.js';

/** `axe models [--json]`: the providers a model can name, where each one's key comes from, the aliases. */
export async function modelsCommand(options: Record<string, unknown>): Promise<number> {
  const { configDir } = resolvePaths(process.env);
  const config = await loadGlobalConfig(configDir);
  for (const warning of config.warnings ?? []) stderr.write(`Warning: ${warning}\n`);
  const providers = listProviders(config, process.env);
  const defaultModel = config.defaultModel;
  if (options.json === true) {
    const json = {
      providers: providers.map((provider) => ({
        name: provider.name,
        ...(provider.api !== undefined ? { api: provider.api } : {}),
        ...(provider.baseUrl !== undefined ? { base_url: provider.baseUrl } : {}),
        key_source: provider.keySource,
        key_variable: provider.keyVariable,
        key_missing: provider.keyMissing,
        aliases: provider.aliases,
        ...(provider.problem !== undefined ? { problem: provider.problem } : {}),
      })),
      aliases: MODEL_ALIASES,
      ...(defaultModel !== undefined ? { default_model: defaultModel } : {}),
    };
    stdout.write(`${maskSecrets(JSON.stringify(json))}\n`);
    return 0;
  }
  const nameWidth = Math.max(...providers.map((provider) => displayName(provider).length));
  const lines = ['Providers (a model is provider/model):'];
  for (const provider of providers) {
    const where =
      provider.problem ??
      `${(provider.api ?? '').padEnd(9)}  ${provider.baseUrl ?? '(base URL from the region)'}`;
    lines.push(`  ${displayName(provider).padEnd(nameWidth)}  ${where}  key: ${keyText(provider)}`);
  }
  lines.push('', 'Aliases:');
  const aliasWidth = Math.max(...Object.keys(MODEL_ALIASES).map((alias) => alias.length));
  for (const [alias, model] of Object.entries(MODEL_ALIASES))
    lines.push(`  ${alias.padEnd(aliasWidth)}  ${model}`);
  lines.push(
    '',
    defaultModel !== undefined
      ? `Default model: ${defaultModel} (config.toml [defaults] model)`
      : 'Default model: none (set [defaults] model in config.toml to run without -m or an agent file)',
  );
  stdout.write(`${maskSecrets(lines.join('\n'))}\n`);
  return 0;
}

function displayName(provider: ListedProvider): string {
  return provider.aliases.length > 0 ? `${provider.name} (${provider.aliases.join(', ')})` : provider.name;
}

/** Where the key comes from, never the key. */
function keyText(provider: ListedProvider): string {
  if (provider.problem !== undefined) return '-';
  if (provider.keySource === 'env') return `${provider.keyVariable} (set)`;
  if (provider.keySource === 'config') return `config.toml providers.${provider.name}.api_key`;
  return provider.keyMissing
    ? `not set (${provider.keyVariable})`
    : `none needed (${provider.keyVariable} if set)`;
}
