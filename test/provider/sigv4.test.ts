import { describe, expect, it } from 'vitest';
import { signV4 } from '../../internal/provider/sigv4.js';

/**
 * AWS's Signature Version 4 test suite (aws4_testsuite, as botocore publishes it): the suite's
 * example key, region and date; the expected Authorization headers are the suite's.
 */
const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const date = new Date('2015-08-30T12:36:00Z');
const SCOPE = 'Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request';
const TOKEN =
  'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==';

const VECTORS: {
  name: string;
  method: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  body?: string;
  token?: string;
  signed: string;
  signature: string;
}[] = [
  {
    name: 'get-vanilla',
    method: 'GET',
    path: '/',
    signed: 'host;x-amz-date',
    signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'post-vanilla',
    method: 'POST',
    path: '/',
    signed: 'host;x-amz-date',
    signature: '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
  },
  {
    name: 'get-vanilla-query-order-key-case',
    method: 'GET',
    path: '/',
    query: '?Param2=value2&Param1=value1',
    signed: 'host;x-amz-date',
    signature: 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
  },
  {
    name: 'post-x-www-form-urlencoded',
    method: 'POST',
    path: '/',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'Param1=value1',
    signed: 'content-type;host;x-amz-date',
    signature: 'ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
  },
  {
    name: 'get-utf8',
    method: 'GET',
    path: '/ሴ',
    signed: 'host;x-amz-date',
    signature: '8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85',
  },
  {
    name: 'get-vanilla-utf8-query',
    method: 'GET',
    path: '/',
    query: '?ሴ=bar',
    signed: 'host;x-amz-date',
    signature: '2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04',
  },
  {
    name: 'normalize-path/get-space',
    method: 'GET',
    path: '/example space/',
    signed: 'host;x-amz-date',
    signature: '652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741',
  },
  {
    name: 'post-sts-token/post-sts-header-before',
    method: 'POST',
    path: '/',
    token: TOKEN,
    signed: 'host;x-amz-date;x-amz-security-token',
    signature: '85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead',
  },
];

describe("SigV4 against AWS's test suite", () => {
  it.each(VECTORS)('$name', (vector) => {
    const headers = signV4({
      method: vector.method,
      url: `https://example.amazonaws.com${encodeURI(vector.path)}${vector.query ?? ''}`,
      path: vector.path,
      ...(vector.headers ? { headers: vector.headers } : {}),
      body: vector.body ?? '',
      region: 'us-east-1',
      service: 'service',
      credentials: { ...credentials, ...(vector.token ? { sessionToken: vector.token } : {}) },
      date,
    });
    expect(headers.authorization).toBe(
      `AWS4-HMAC-SHA256 ${SCOPE}, SignedHeaders=${vector.signed}, Signature=${vector.signature}`,
    );
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
    expect(headers['x-amz-security-token']).toBe(vector.token);
  });

  it("escapes a path the caller already escaped once more, as every service but S3 expects (Bedrock's model ids)", () => {
    const sign = (path: string) =>
      signV4({
        method: 'POST',
        url: `https://bedrock-runtime.us-east-1.amazonaws.com${path}`,
        path,
        body: '{}',
        region: 'us-east-1',
        service: 'bedrock',
        credentials,
        date,
      }).authorization;
    // `a%3A0` is signed as `a%253A0`, so it differs from a raw `:` — and from the unescaped form.
    expect(sign('/model/a%3A0/converse')).not.toBe(sign('/model/a:0/converse'));
    expect(sign('/model/a%3A0/converse')).toMatch(/SignedHeaders=host;x-amz-date, Signature=[0-9a-f]{64}$/);
  });
});
