/**
 * The `axe` commands written in the docs' ```sh blocks, as a shell would split them: words,
 * quotes, `\` line continuations, comments, pipes and lists, `<` and `>` redirections, and
 * `NAME=value` words before a command. A block that uses what this does not read (command
 * substitution, backquotes) is an error, so a page cannot slip a command past the test.
 */

export interface DocCommand {
  /** `README.md:31`: the page and the line the command starts on. */
  where: string;
  /** The arguments after `axe` (or `npx axe`). */
  args: string[];
  /** `NAME=value` words written before the command. */
  env: Record<string, string>;
  /** The file of a `< file` redirection, as written. */
  stdinFile?: string;
  /** False when the block is marked `<!-- not-run -->`: only its command and flags are checked. */
  run: boolean;
}

interface Block {
  line: number;
  text: string;
  run: boolean;
}

const NOT_RUN = '<!-- not-run -->';

/** The ```sh blocks of a Markdown page, each with the line it starts on and its not-run mark. */
export function shBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    let before = i - 1;
    while (before >= 0 && lines[before]?.trim() === '') before--;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`line ${i + 1}: a \`\`\`sh block that never ends`);
    blocks.push({ line: i + 2, text: lines.slice(i + 1, end).join('\n'), run: lines[before] !== NOT_RUN });
    i = end;
  }
  return blocks;
}

/** Whether `c` is one character of `chars` (not the end of the text). */
const oneOf = (chars: string, c: string | undefined): boolean =>
  c !== undefined && c !== '' && chars.includes(c);

type Token = { word: string; line: number } | { op: string; line: number };

/** Shell words and operators of a block; `line` counts from the block's first line (0). */
function tokens(text: string): Token[] {
  const out: Token[] = [];
  let word: string | undefined;
  let wordLine = 0;
  let line = 0;
  const end = (): void => {
    if (word !== undefined) out.push({ word, line: wordLine });
    word = undefined;
  };
  const add = (chars: string): void => {
    if (word === undefined) wordLine = line;
    word = (word ?? '') + chars;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && text[i + 1] === '\n') {
      i++;
      line++;
    } else if (c === '\\') {
      add(text[++i] ?? '');
    } else if (c === '\n' || c === ';') {
      end();
      out.push({ op: ';', line });
      if (c === '\n') line++;
    } else if (c === ' ' || c === '\t') {
      end();
    } else if (c === '#' && word === undefined) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) throw new Error(`line ${line + 1}: an unclosed '`);
      add(text.slice(i + 1, close));
      i = close;
    } else if (c === '"') {
      add('');
      for (i++; text[i] !== '"'; i++) {
        if (i >= text.length) throw new Error(`line ${line + 1}: an unclosed "`);
        if (text[i] === '`' || (text[i] === '$' && text[i + 1] === '(')) {
          throw new Error(`line ${line + 1}: command substitution is not read here`);
        }
        if (text[i] === '\\' && oneOf('"\\$`', text[i + 1])) i++;
        add(text[i] as string);
      }
    } else if (c === '`' || (c === '$' && text[i + 1] === '(')) {
      throw new Error(`line ${line + 1}: command substitution is not read here`);
    } else if (oneOf('|&<>', c)) {
      // `2>` and `2>&1`: a file descriptor number right before the operator belongs to it.
      const fd = word !== undefined && /^\d$/.test(word) ? word : '';
      if (fd) word = undefined;
      end();
      let op = fd + c;
      while (oneOf('|&<>', text[i + 1])) op += text[++i];
      if (text[i + 1] === '1' || text[i + 1] === '2') op += text[++i]; // `>&1`, `2>&2`
      out.push({ op, line });
    } else {
      add(c);
    }
  }
  end();
  return out;
}

const SEPARATORS = new Set([';', '|', '||', '&&', '&']);

/** The `axe` and `npx axe` commands of one page, in order. */
export function docCommands(page: string, markdown: string): DocCommand[] {
  const commands: DocCommand[] = [];
  for (const block of shBlocks(markdown)) {
    let simple: Token[] = [];
    const finish = (): void => {
      const command = axeCommand(simple, `${page}:${block.line}`, block.run);
      if (command) commands.push(command);
      simple = [];
    };
    for (const token of tokens(block.text)) {
      if ('op' in token && SEPARATORS.has(token.op)) finish();
      else simple.push(token);
    }
    finish();
  }
  return commands;
}

function axeCommand(simple: Token[], blockStart: string, run: boolean): DocCommand | undefined {
  const words: string[] = [];
  const env: Record<string, string> = {};
  let stdinFile: string | undefined;
  for (let i = 0; i < simple.length; i++) {
    const token = simple[i] as Token;
    if ('op' in token) {
      const target = simple[i + 1];
      if (token.op.endsWith('&1') || token.op.endsWith('&2')) continue;
      if (!target || !('word' in target)) throw new Error(`${blockStart}: ${token.op} without a file`);
      if (token.op === '<') stdinFile = target.word;
      i++;
    } else if (words.length === 0 && /^[A-Za-z_]\w*=/.test(token.word)) {
      const [name, ...value] = token.word.split('=');
      env[name as string] = value.join('=');
    } else {
      words.push(token.word);
    }
  }
  const skip = words[0] === 'axe' ? 1 : words[0] === 'npx' && words[1] === 'axe' ? 2 : 0;
  if (skip === 0) return undefined;
  const [page, first] = blockStart.split(':') as [string, string];
  const where = `${page}:${Number(first) + (simple[0]?.line ?? 0)}`;
  return { where, args: words.slice(skip), env, run, ...(stdinFile !== undefined && { stdinFile }) };
}
