// htmlToText on pages built to make a rescanning converter quadratic (an opener with no closer,
// repeated), at 256 KiB and at 2 MiB (url_fetch's limit): a linear converter takes about 8× as
// long for the 8× larger page, a quadratic one about 64×. Timed here, not in the tests, where a
// bound in milliseconds fails on a busy machine.
import { performance } from 'node:perf_hooks';
import { htmlToText } from '../internal/tools/html-to-text.js';
import { HOSTILE } from '../test/tools/hostile-html.js';

const KiB = 1024;
const SIZES = [256 * KiB, 2048 * KiB];

function ms(page: string): number {
  const start = performance.now();
  htmlToText(page);
  return performance.now() - start;
}

const rows = ['| page | 256 KiB | 2 MiB | ratio |', '|---|---|---|---|'];
for (const [name, { page }] of Object.entries(HOSTILE)) {
  const [small, large] = SIZES.map((size) => ms(page(size))) as [number, number];
  rows.push(`| ${name} | ${small.toFixed(1)} ms | ${large.toFixed(1)} ms | ${(large / small).toFixed(1)}× |`);
}
process.stdout.write(
  `${rows.join('\n')}\n(8× the characters: ~8× the time when linear, ~64× when quadratic)\n`,
);
