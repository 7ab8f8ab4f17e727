import { isoTime } from '../time.js';

/** AWS credentials, from the environment or a shared credentials file. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigV4Request {
  method: string;
  /** Absolute URL: its host and query are signed. */
  url: string;
  /**
   * The path as the request holds it before the HTTP layer (`/model/a%3A0/converse` for a label
   * the caller already escaped): each segment is URI-escaped once more for the canonical request,
   * as every AWS service but S3 expects. Defaults to the URL's path.
   */
  path?: string;
  /** Extra headers to sign (lower-cased names), e.g. `content-type`. */
  headers?: Record<string, string>;
  body: string;
  region: string;
  service: string;
  credentials: AwsCredentials;
  date: Date;
}

/**
 * AWS Signature Version 4 (header form): the headers to add — `x-amz-date`, the session token
 * when there is one (signed), and `authorization`. Checked against AWS's published test suite.
 */
export function signV4(request: SigV4Request): Record<string, string> {
  const url = new URL(request.url);
  const amzDate = isoTime(request.date)
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const token = request.credentials.sessionToken;
  const headers: Record<string, string> = {
    ...lowerCased(request.headers ?? {}),
    host: url.host,
    'x-amz-date': amzDate,
    ...(token ? { 'x-amz-security-token': token } : {}),
  };
  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(';');
  const canonical = [
    request.method.toUpperCase(),
    canonicalPath(request.path ?? url.pathname),
    canonicalQuery(url.searchParams),
    names.map((name) => `${name}:${headers[name]?.trim().replace(/\s+/g, ' ')}\n`).join(''),
    signedHeaders,
    sha256Hex(request.body),
  ].join('\n');
  const scope = `${day}/${request.region}/${request.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonical)].join('\n');
  let key = hmac(`AWS4${request.credentials.secretAccessKey}`, day);
  for (const part of [request.region, request.service, 'aws4_request']) key = hmac(key, part);
  const signature = crypto().createHmac('sha256', key).update(toSign).digest('hex');
  return {
    'x-amz-date': amzDate,
    ...(token ? { 'x-amz-security-token': token } : {}),
    authorization: `AWS4-HMAC-SHA256 Credential=${request.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** RFC 3986 escaping: everything but `A-Z a-z 0-9 - _ . ~`. */
function escapeUri(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function canonicalPath(path: string): string {
  return path.split('/').map(escapeUri).join('/') || '/';
}

function canonicalQuery(params: URLSearchParams): string {
  return [...params.entries()]
    .map(([key, value]) => [escapeUri(key), escapeUri(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
}

function sha256Hex(text: string): string {
  return crypto().createHash('sha256').update(text, 'utf8').digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return crypto().createHmac('sha256', key).update(data, 'utf8').digest();
}

/** node:crypto, loaded when a Bedrock request is first signed rather than at every start-up. */
function crypto(): typeof import('node:crypto') {
  return process.getBuiltinModule('node:crypto');
}
