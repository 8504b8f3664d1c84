// Approvals, exactly once (control-channel.ts): the same tests against the file channel and the
// PostgreSQL one. Operators on separate connections race; the agent's timeout races an operator.
import type { AnswerOutcome } from '@rho/core';
import { expect, it } from 'vitest';
import type { ConformanceSession } from './control-conformance.js';
import { eventually } from './postgres.js';

/** Registers the approval tests for an implementation. `create` makes a fresh session per test. */
export function approvalConformance(create: () => Promise<ConformanceSession>): void {
  it('approvals: operators racing on one call, exactly one is answered and all see the winner', async () => {
    const session = await create();
    expect(await session.agent.takeApprovalAnswer!('call-1')).toBeUndefined();
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        session.operator().answerApproval!('call-1', {
          decision: index % 2 === 0 ? 'approve' : 'deny',
          by: `operator-${index}`,
          source: 'operator',
        }),
      ),
    );
    const answered = outcomes.filter((outcome) => outcome.outcome === 'answered');
    expect(answered).toHaveLength(1);
    const winner = answered[0]!.answer;
    for (const outcome of outcomes) expect(outcome.answer).toMatchObject({ decision: winner.decision, by: winner.by });
    const seen = await eventually(() => session.agent.takeApprovalAnswer!('call-1'), 'the answer');
    expect(seen).toMatchObject({ decision: winner.decision, by: winner.by, scope: 'once', source: 'operator' });
    // Another call is untouched.
    expect(await session.agent.takeApprovalAnswer!('call-2')).toBeUndefined();
  });

  it('approvals: the scope and reason of an answer reach the agent', async () => {
    const session = await create();
    const outcome = await session.operator().answerApproval!('call-scope', {
      decision: 'approve',
      scope: 'tool',
      reason: 'fine by me',
      by: 'alice',
    });
    expect(outcome).toMatchObject({ outcome: 'answered', answer: { scope: 'tool', reason: 'fine by me' } });
    expect(await eventually(() => session.agent.takeApprovalAnswer!('call-scope'), 'the answer')).toMatchObject({
      decision: 'approve',
      scope: 'tool',
      reason: 'fine by me',
      by: 'alice',
    });
    await expect(session.operator().answerApproval!('call-x', { decision: 'maybe' } as never)).rejects.toThrow(
      /"approve" or "deny"/,
    );
  });

  it("approvals: the agent's timeout and an operator's answer racing settle on one", async () => {
    for (let round = 0; round < 4; round++) {
      const session = await create();
      const id = `call-race-${round}`;
      const [timeout, person] = await Promise.all([
        session.agent.settleApproval!(id, { decision: 'deny', by: 'timeout', source: 'timeout' }),
        session.operator().answerApproval!(id, { decision: 'approve', by: 'alice' }),
      ]);
      const outcomes: AnswerOutcome[] = [timeout, person];
      expect(outcomes.filter((outcome) => outcome.outcome === 'answered')).toHaveLength(1);
      expect(timeout.answer.decision).toBe(person.answer.decision);
      // Settling again is told the same winner.
      const again = await session.agent.settleApproval!(id, { decision: 'deny', source: 'timeout' });
      expect(again).toMatchObject({ outcome: 'already_answered', answer: { decision: timeout.answer.decision } });
    }
  });
}
