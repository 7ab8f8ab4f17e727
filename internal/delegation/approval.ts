import type { AgentSpec } from '../agent/spec.js';
import type { Message } from '../provider/types.js';
import { emitEvent, type RunContext } from '../runner/context.js';
import type { LoopSetup, ToolHandler } from '../runner/loop.js';
import type { Approval, ApprovalRequest, Approve } from '../runner/questions.js';
import { toolFailure } from '../runner/result.js';
import { gateCall, tierOf } from '../tools/tiers.js';
import { sideAnswer } from './side-answer.js';

/*
 * Approvals: a call above an agent's `tier` (or a command outside its `[permissions] allow`) is put
 * to its caller's model, which answers yes or no with a reason — or, for the top-level agent and
 * its children with `--interactive`, to the person. With no one to ask it is denied.
 */

/** How an agent answers its children's requests: with the child's conversation at hand. */
export type ParentApprover = (
  request: ApprovalRequest,
  history: readonly Message[],
  signal: AbortSignal,
  deadline: number | undefined,
) => Promise<Approval>;

/** How this agent answers its children's requests: its model (a side request), or the person. */
export function parentApprover(
  spec: AgentSpec,
  ctx: RunContext,
  setup: () => LoopSetup | undefined,
): ParentApprover {
  const { askPerson } = ctx;
  return async (request, history, signal, deadline) => {
    const question = approvalQuestion(request);
    const person = ctx.depth === 0 && askPerson !== undefined;
    const said = person
      ? await askPerson(request.agent, `${question} Answer yes or no, and why.`, signal)
      : await sideAnswer(
          setup() as LoopSetup,
          history,
          `Your sub-agent "${request.agent}" asks for approval: ${question} Answer "yes" or "no" first, then your reason in one sentence; you cannot use tools now.`,
          signal,
          deadline,
        );
    emitEvent(ctx, spec.name, { type: 'question', from: request.agent, question, answer: said });
    return { ...verdict(said), by: person ? 'the person' : `its caller "${spec.name}"` };
  };
}

/** A child's side: at most `maxQuestions` requests, each with the conversation it was started from. */
export function childApproval(
  approver: ParentApprover,
  history: readonly Message[],
  maxQuestions: number,
): Approve {
  let asked = 0;
  return (request, signal, deadline) => {
    if (asked >= maxQuestions) {
      const reason = `it has asked ${asked} times, the most allowed (max_questions)`;
      return Promise.resolve({ allowed: false, reason, by: 'axe' });
    }
    asked++;
    return approver(request, history, signal, deadline);
  };
}

/**
 * `handler` behind the agent's tier and `[permissions]`: a denied command never runs; a call that
 * needs approval runs only once it is given. Only agents with a tier or rules get this.
 */
export function gatedHandler(
  spec: AgentSpec,
  ctx: RunContext,
  name: string,
  readOnly: boolean,
  handler: ToolHandler,
): ToolHandler {
  const needs = tierOf(name, readOnly);
  const approve = ctx.approve ?? personApproval(spec, ctx);
  return async (call, turn, history) => {
    const gate = gateCall(name, needs, call.arguments, spec.tier, spec.permissions);
    if (gate.kind === 'run') return handler(call, turn, history);
    if (gate.kind === 'deny') return { output: toolFailure(`${name} denied: ${gate.reason}`) };
    if (!approve) {
      return {
        output: toolFailure(
          `${name} denied: ${gate.why}, and no one can approve it here (a sub-agent asks its caller; the top-level agent asks the person with --interactive)`,
        ),
      };
    }
    const request = { agent: spec.name, tool: name, args: call.arguments, why: gate.why };
    const answer = await approve(request, ctx.signal, ctx.deadline);
    if (!answer.allowed) return { output: toolFailure(`${name} denied by ${answer.by}: ${answer.reason}`) };
    return handler(call, turn, history);
  };
}

/** The top-level agent's own requests, with `--interactive`: the person answers. */
function personApproval(spec: AgentSpec, ctx: RunContext): Approve | undefined {
  const { askPerson } = ctx;
  if (ctx.depth !== 0 || askPerson === undefined) return undefined;
  return async (request, signal) => {
    const question = approvalQuestion(request);
    const said = await askPerson(spec.name, `${question} Answer yes or no, and why.`, signal);
    emitEvent(ctx, spec.name, { type: 'question', from: spec.name, question, answer: said });
    return { ...verdict(said), by: 'the person' };
  };
}

/** `May it call run_command \`git push\`? (run_command needs the "shell" tier, above …)` */
function approvalQuestion({ tool, args, why }: ApprovalRequest): string {
  const what =
    typeof args.command === 'string'
      ? ` \`${args.command}\``
      : typeof args.path === 'string'
        ? ` on ${args.path}`
        : '';
  return `may it call ${tool}${what}? (${why})`;
}

/** Yes when the answer begins with yes (or allow/approve); its reason is what follows. */
function verdict(said: string): Pick<Approval, 'allowed' | 'reason'> {
  const text = said.trim();
  const opening =
    /^[\s*_"'`]*(yes|y|no|n|allow(?:ed)?|approve(?:d)?|deny|denied)\b[\s*_"'`.,:;!\u2014-]*/i.exec(text);
  const word = opening?.[1]?.toLowerCase() ?? '';
  const allowed = ['yes', 'y', 'allow', 'allowed', 'approve', 'approved'].includes(word);
  const reason = (opening ? text.slice(opening[0].length) : text).trim();
  return { allowed, reason: reason === '' ? (allowed ? 'approved' : 'no reason given') : reason };
}
