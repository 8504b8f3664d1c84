import type {
  AnswerOutcome,
  ApprovalAnswer,
  ControlChannel,
  SessionOptions,
  SessionStatus,
  TakenDirectives,
} from '@rho/core';
import { FileControlChannel } from '@rho/core/internal';

/**
 * The directive cursor is one number (core records it in the trace): the file channel's byte
 * offset lives in its low 32 bits, the fleet channel's cursor above them. Both stay exact in a
 * double while the fleet cursor is below 2^21 (two million directives for one session) and the
 * directives file below 4 GiB.
 */
const FILE_SPAN = 2 ** 32;
const FLEET_LIMIT = 2 ** 21;

/** A plain file channel's cursor is below this; at or above it, a cursor holds a fleet part. */
export const COMPOSITE_CURSOR_FILE_SPAN = FILE_SPAN;

/**
 * A session's control channel when a fleet is configured: the local file channel (session
 * directory: `rho cancel --dir`, the sentinel files, the Python original's tools) and the fleet's
 * channel (PostgreSQL: any node), both honoured. Cancel and pause are asked of both (either one
 * holds or stops the agent); directives are taken from both queues, each exactly once, under one
 * cursor; heartbeat and status go to both. The fleet's channel may arrive late (the database was
 * down at start) or fail at any time: its failures are ignored here (the fleet library reconnects
 * and catches up), so the agent never waits on the database and the file channel always works.
 *
 * Approvals: the file channel is the local authority, the one answer the trace records. An answer
 * is taken from the file channel first (`rho approve --dir`, the dashboard on this machine), then
 * from the fleet (any node); an answer the fleet delivered is claimed on the file channel before
 * it is applied, so when a local answer raced it, the local one (the file's winner) is applied,
 * and both sides settle on one. A timeout is recorded in the fleet first (so an operator answering
 * after it is told the timeout won, or the timeout is told the operator's answer won), then on the
 * file channel, whose winner is applied. The fleet's row and the trace can disagree only when a
 * local answer and a fleet answer arrive within the same moment; the trace's `approval_answered`
 * says which was applied.
 */
export class CompositeControlChannel implements ControlChannel {
  /**
   * @param file the session directory's file channel.
   * @param fleet the fleet's channel once attached (undefined until then).
   */
  constructor(
    private readonly file: ControlChannel,
    private readonly fleet: () => ControlChannel | undefined,
  ) {}

  async isCancelRequested(): Promise<boolean> {
    if (await this.file.isCancelRequested()) return true;
    return (await quietly(this.fleet()?.isCancelRequested())) === true;
  }

  async isPauseRequested(): Promise<boolean> {
    if (await this.file.isPauseRequested()) return true;
    return (await quietly(this.fleet()?.isPauseRequested())) === true;
  }

  async takeDirectives(cursor: number): Promise<TakenDirectives> {
    const { file: fileCursor, fleet: fleetCursor } = splitCursor(cursor);
    const fromFile = await this.file.takeDirectives(fileCursor);
    const items: { text: string; cursor: number; refused?: string }[] = (
      fromFile.items ?? fromFile.texts.map((text) => ({ text, cursor: fromFile.cursor }))
    ).map((item) => ({ ...item, cursor: joinCursor(item.cursor, fleetCursor) }));
    let nextFleet = fleetCursor;
    const fleet = this.fleet();
    const fromFleet = fleet === undefined ? undefined : await quietly(fleet.takeDirectives(fleetCursor));
    if (fromFleet !== undefined) {
      for (const item of fromFleet.items ?? fromFleet.texts.map((text) => ({ text, cursor: fromFleet.cursor })))
        items.push({ ...item, cursor: joinCursor(fromFile.cursor, item.cursor) });
      nextFleet = fromFleet.cursor;
    }
    return {
      texts: items.flatMap((item) => (item.refused === undefined ? [item.text] : [])),
      cursor: joinCursor(fromFile.cursor, nextFleet),
      items,
    };
  }

  async clearCancel(): Promise<void> {
    await Promise.all([this.file.clearCancel(), quietly(this.fleet()?.clearCancel())]);
  }

  async heartbeat(): Promise<void> {
    await Promise.all([quietly(this.file.heartbeat()), quietly(this.fleet()?.heartbeat())]);
  }

  async reportStatus(status: SessionStatus): Promise<void> {
    await Promise.all([quietly(this.file.reportStatus(status)), quietly(this.fleet()?.reportStatus(status))]);
  }

  async takeApprovalAnswer(toolCallId: string): Promise<ApprovalAnswer | undefined> {
    const local = await this.file.takeApprovalAnswer?.(toolCallId);
    if (local !== undefined) return local;
    const fleet = this.fleet();
    const remote = await quietly(fleet?.takeApprovalAnswer?.(toolCallId));
    if (remote === undefined) return undefined;
    if (this.file.settleApproval === undefined) return remote;
    return (await this.file.settleApproval(toolCallId, remote)).answer;
  }

  async settleApproval(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome> {
    const fleet = this.fleet();
    const remote = await quietly(fleet?.settleApproval?.(toolCallId, answer));
    const offered = remote?.answer ?? answer;
    if (this.file.settleApproval === undefined) return remote ?? { outcome: 'answered', answer };
    const local = await this.file.settleApproval(toolCallId, offered);
    // The caller's answer won only when it is the one the file recorded and the fleet did not hold another.
    return remote?.outcome === 'already_answered' && local.outcome === 'answered'
      ? { outcome: 'already_answered', answer: local.answer }
      : local;
  }
}

/** The two cursors of a composite cursor (a plain file cursor, from a run without a fleet, has no fleet part). */
export function splitCursor(cursor: number): { file: number; fleet: number } {
  if (!Number.isSafeInteger(cursor) || cursor < 0) return { file: 0, fleet: 0 };
  return { file: cursor % FILE_SPAN, fleet: Math.floor(cursor / FILE_SPAN) };
}

/** One cursor from the file channel's and the fleet channel's. */
export function joinCursor(file: number, fleet: number): number {
  if (fleet >= FLEET_LIMIT || file >= FILE_SPAN)
    throw new RangeError(
      `Directive cursor out of range (file ${file}, fleet ${fleet}); the session has more directives than one cursor can count.`,
    );
  return fleet * FILE_SPAN + file;
}

/** A channel call whose failure (the database is away) counts as "nothing". */
async function quietly<T>(call: Promise<T> | undefined): Promise<T | undefined> {
  if (call === undefined) return undefined;
  try {
    return await call;
  } catch {
    return undefined;
  }
}

/**
 * The control channel of a resumed session that once ran in a fleet and runs without one now: its
 * trace holds a composite directive cursor, so its file channel must read only the cursor's file
 * part (or it would start its directives over). A plain cursor needs nothing (core's default
 * channel): then this returns no options.
 */
export function resumedFileControl(directory: string, cursor: number): SessionOptions {
  if (cursor < FILE_SPAN) return {};
  return { control: new CompositeControlChannel(new FileControlChannel(directory), () => undefined) };
}
