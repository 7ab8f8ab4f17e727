import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A user's clone has nothing beside it: no test, bench or script may reach a sibling directory
 * of the checkout or an absolute path into the developers' workspace.
 */
const SIBLING = 'sha' + 'red'; // spelled in two parts, so this file does not name the path itself
const OUTSIDE = new RegExp(`\\.\\./(\\.\\./)*${SIBLING}\\b|/work/${SIBLING}`);
describe('the repository stands alone', () => {
  it('no tracked test, bench or script file names a path outside the repository', () => {
    const files = execFileSync('git', ['ls-files', 'test', 'bench', 'scripts', '.ci'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((file) => /\.(ts|mjs|js|json|sh)$|^\.ci\//.test(file));
    expect(files.length).toBeGreaterThan(20);
    const offenders = files.filter((file) => OUTSIDE.test(readFileSync(`${repoRoot}/${file}`, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the vendored OpenAI schema carries its licence', () => {
    const license = readFileSync(`${repoRoot}/test/fake-llm/vendor/openai/LICENSE`, 'utf8');
    expect(license).toMatch(/MIT License/);
    const schema = JSON.parse(
      readFileSync(`${repoRoot}/test/fake-llm/vendor/openai/openai-chat-completions.schema.json`, 'utf8'),
    ) as { components: { schemas: Record<string, unknown> } };
    expect(schema.components.schemas.CreateChatCompletionRequest).toBeDefined();
  });
});

describe('the build', () => {
  it('dist/ is readable by every user (a shared install), main.js executable', () => {
    const dist = `${repoRoot}/dist`;
    expect(statSync(dist).mode & 0o755).toBe(0o755);
    for (const file of readdirSync(dist)) expect(statSync(`${dist}/${file}`).mode & 0o444).toBe(0o444);
    expect(statSync(`${dist}/main.js`).mode & 0o111).toBe(0o111);
  });
});
