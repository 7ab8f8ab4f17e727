/** Paths, config.toml and provider settings (env > file > default). */
export { type GlobalConfig, loadGlobalConfig, type ProviderConfig } from './global.js';
export { type AxePaths, agentSearchDirs, resolvePaths } from './paths.js';
export { BUILTIN_PROVIDERS, envName, resolveProviderSettings } from './providers.js';
