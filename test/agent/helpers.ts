import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { loadAgentFile } from '../../internal/agent/load.js';
import type { AgentSpec } from '../../internal/agent/spec.js';
import { ConfigError } from '../../internal/errors.js';
import { tempDirForFile } from '../temp-dir.js';

/**
 * A fresh temp directory with the given files (path → content) written into it; removed after
 * the test file.
 */
export function tempDir(files: Record<string, string | Uint8Array> = {}): string {
  const dir = tempDirForFile('axe-test-');
  writeFiles(dir, files);
  return dir;
}

function writeFiles(dir: string, files: Record<string, string | Uint8Array>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = join(dir, name);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

/** Loads `content` written as `<temp dir>/<name>`. */
export async function loadFrom(
  name: string,
  content: string,
  env: NodeJS.ProcessEnv = {},
): Promise<AgentSpec> {
  const dir = tempDir({ [name]: content });
  return loadAgentFile(join(dir, name), env);
}

/** The one-line message of the ConfigError that loading `content` as `name` must throw. */
export async function loadErrorFrom(
  name: string,
  content: string,
  env: NodeJS.ProcessEnv = {},
): Promise<string> {
  try {
    await loadFrom(name, content, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`expected a ConfigError loading ${name}`);
}
