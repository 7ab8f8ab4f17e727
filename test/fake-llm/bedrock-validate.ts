import { signV4 } from '../../internal/provider/sigv4.js';
import { isRecord, type JsonRecord } from './json.js';
import type { IncomingRequest, Refusal } from './wire.js';

/** The credentials the fake accepts: tests set them as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. */
export const FAKE_AWS_ACCESS_KEY_ID = 'AKIDFAKEBEDROCK';
export const FAKE_AWS_SECRET_ACCESS_KEY = 'fake/bedrock+secret+for+the+test+server';

const TOP_LEVEL = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
]);
const BLOCK_KINDS = [
  'text',
  'image',
  'document',
  'video',
  'toolUse',
  'toolResult',
  'guardContent',
  'reasoningContent',
  'cachePoint',
];

const invalid = (message: string, status = 400): Refusal => ({
  status,
  message,
  code: 'ValidationException',
});

/**
 * POST /model/{modelId}/converse as Bedrock checks it: a SigV4 signature it can verify (the
 * fake's credentials), then the Converse shape — known keys only, alternating roles starting
 * with the user, one kind per content block, no blank text, every toolUse answered by the next
 * user turn and every toolResult answering one.
 */
export function validateBedrock(request: IncomingRequest): Refusal | undefined {
  const signature = checkSignature(request);
  if (signature) return signature;
  const body = request.body;
  if (!isRecord(body)) return invalid('Malformed input request, please reformat your input and try again.');
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.has(key))
      return invalid(
        `Malformed input request: extraneous key [${key}] is not permitted, please reformat your input and try again.`,
      );
  }
  const tools = checkTools(body.toolConfig);
  if (tools) return tools;
  const inference = body.inferenceConfig;
  if (inference !== undefined) {
    if (!isRecord(inference)) return invalid('inferenceConfig must be an object');
    if (typeof inference.maxTokens === 'number' && inference.maxTokens < 1) {
      return invalid(
        "1 validation error detected: Value at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1",
      );
    }
  }
  return checkMessages(body.messages);
}

function checkSignature(request: IncomingRequest): Refusal | undefined {
  const header = request.headers.authorization ?? '';
  const parsed =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/bedrock\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
      header,
    );
  const amzDate = request.headers['x-amz-date'] ?? '';
  if (!parsed || !/^\d{8}T\d{6}Z$/.test(amzDate)) {
    return {
      status: 403,
      message: 'Missing Authentication Token',
      code: 'MissingAuthenticationTokenException',
    };
  }
  const [, keyId = '', day, region = '', signedList = '', signature] = parsed;
  if (keyId !== FAKE_AWS_ACCESS_KEY_ID) {
    return {
      status: 403,
      message: 'The security token included in the request is invalid.',
      code: 'UnrecognizedClientException',
    };
  }
  const signed = signedList.split(';');
  const extra: Record<string, string> = {};
  for (const name of signed) {
    if (!['host', 'x-amz-date', 'x-amz-security-token'].includes(name))
      extra[name] = request.headers[name] ?? '';
  }
  const date = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const token = request.headers['x-amz-security-token'];
  const expected =
    signV4({
      method: 'POST',
      url: `http://${request.headers.host ?? ''}${request.rawPath ?? request.path}`,
      path: request.rawPath ?? request.path,
      headers: extra,
      body: request.text ?? '',
      region,
      service: 'bedrock',
      credentials: {
        accessKeyId: keyId,
        secretAccessKey: FAKE_AWS_SECRET_ACCESS_KEY,
        ...(token ? { sessionToken: token } : {}),
      },
      date,
    }).authorization ?? '';
  if (
    day !== amzDate.slice(0, 8) ||
    !expected.endsWith(`Signature=${signature}`) ||
    !signed.includes('host')
  ) {
    return {
      status: 403,
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
      code: 'InvalidSignatureException',
    };
  }
  return undefined;
}

function checkTools(config: unknown): Refusal | undefined {
  if (config === undefined) return undefined;
  if (!isRecord(config) || !Array.isArray(config.tools) || config.tools.length === 0) {
    return invalid('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  }
  for (const [i, tool] of config.tools.entries()) {
    const spec = isRecord(tool) ? tool.toolSpec : undefined;
    if (
      !isRecord(spec) ||
      typeof spec.name !== 'string' ||
      !isRecord(spec.inputSchema) ||
      !isRecord(spec.inputSchema.json)
    ) {
      return invalid(
        `The value at toolConfig.tools.${i}.toolSpec must have a name and an inputSchema.json object.`,
      );
    }
  }
  return undefined;
}

function checkMessages(messages: unknown): Refusal | undefined {
  if (!Array.isArray(messages) || messages.length === 0) {
    return invalid(
      'A conversation must start with a user message. Try again with a conversation that starts with a user message.',
    );
  }
  let pendingUses = new Set<string>();
  for (const [i, message] of messages.entries()) {
    if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant')) {
      return invalid(`messages.${i}.role must be user or assistant`);
    }
    const expectedRole = i % 2 === 0 ? 'user' : 'assistant';
    if (message.role !== expectedRole) {
      return invalid(
        i === 0
          ? 'A conversation must start with a user message. Try again with a conversation that starts with a user message.'
          : 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.',
      );
    }
    const content = message.content;
    if (!Array.isArray(content) || content.length === 0) {
      return invalid(
        `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`,
      );
    }
    const results = new Set<string>();
    const uses = new Set<string>();
    for (const [j, block] of content.entries()) {
      const kinds = isRecord(block) ? BLOCK_KINDS.filter((kind) => kind in block) : [];
      if (kinds.length !== 1)
        return invalid(`messages.${i}.content.${j} must hold exactly one content block`);
      const b = block as JsonRecord;
      if (typeof b.text === 'string' && b.text.trim() === '') {
        return invalid(
          `The text field in the ContentBlock object at messages.${i}.content.${j} is blank. Add text to the text field, and try again.`,
        );
      }
      if (isRecord(b.toolUse)) {
        if (message.role !== 'assistant')
          return invalid(`messages.${i}.content.${j}: toolUse blocks are only allowed in assistant messages`);
        uses.add(String(b.toolUse.toolUseId));
      }
      if (isRecord(b.toolResult)) {
        const id = String(b.toolResult.toolUseId);
        if (!pendingUses.has(id)) {
          return invalid(
            `The toolResult blocks at messages.${i}.content contain an ID that was not in the toolUse blocks of the previous turn: ${id}`,
          );
        }
        results.add(id);
      }
    }
    const missing = [...pendingUses].filter((id) => !results.has(id));
    if (missing.length > 0) {
      return invalid(
        `Expected toolResult blocks at messages.${i}.content for the following Ids: ${missing.join(', ')}`,
      );
    }
    pendingUses = uses;
  }
  return undefined;
}
