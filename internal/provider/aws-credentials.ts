import { join } from 'node:path';
import { homeDir } from '../config/paths.js';
import { errorMessage, RuntimeError } from '../errors.js';
import { readRegularFile } from '../fs/read-bounded.js';
import { READ_LIMITS } from '../fs/read-limits.js';
import type { AwsCredentials } from './sigv4.js';

/** Where a Bedrock provider's credentials come from, decided from the environment up front. */
export type AwsCredentialSource =
  | { kind: 'env'; credentials: AwsCredentials }
  | { kind: 'file'; file: string | undefined; profile: string };

/**
 * Go axe's order: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`), else the
 * `AWS_PROFILE` (default `default`) profile of `AWS_SHARED_CREDENTIALS_FILE` or `~/.aws/credentials`.
 */
export function awsCredentialSource(env: NodeJS.ProcessEnv): AwsCredentialSource {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (accessKeyId && secretAccessKey) {
    const sessionToken = env.AWS_SESSION_TOKEN;
    return {
      kind: 'env',
      credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
    };
  }
  const home = homeDir(env);
  const file = env.AWS_SHARED_CREDENTIALS_FILE || (home ? join(home, '.aws', 'credentials') : undefined);
  return { kind: 'file', file, profile: env.AWS_PROFILE || 'default' };
}

/** The credentials themselves; a missing or incomplete profile is Go's error (exit 1). */
export async function loadAwsCredentials(source: AwsCredentialSource): Promise<AwsCredentials> {
  if (source.kind === 'env') return source.credentials;
  const fail = (reason: string) =>
    new RuntimeError(
      `AWS credentials not found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or configure ~/.aws/credentials: ${reason}`,
    );
  if (source.file === undefined) throw fail('there is no home directory');
  let text: string;
  try {
    text = (await readRegularFile(source.file, READ_LIMITS.configFile)).toString('utf8');
  } catch (error) {
    throw fail(`${source.file}: ${errorMessage(error)}`);
  }
  const credentials = parseCredentialsFile(text, source.profile);
  if (!credentials)
    throw fail(`profile "${source.profile}" not found or missing credentials in ${source.file}`);
  return credentials;
}

/** The INI profile's `aws_access_key_id`, `aws_secret_access_key` and `aws_session_token`. */
function parseCredentialsFile(text: string, profile: string): AwsCredentials | undefined {
  const values: Record<string, string> = {};
  let inProfile = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    if (line.startsWith('[') && line.endsWith(']')) {
      inProfile = line.slice(1, -1).trim() === profile;
      continue;
    }
    const equals = line.indexOf('=');
    if (inProfile && equals > 0) values[line.slice(0, equals).trim()] = line.slice(equals + 1).trim();
  }
  const accessKeyId = values.aws_access_key_id;
  const secretAccessKey = values.aws_secret_access_key;
  if (!accessKeyId || !secretAccessKey) return undefined;
  const sessionToken = values.aws_session_token;
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}
