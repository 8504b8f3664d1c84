import type { MonitoredSession } from './list-sessions.js';

/** A session with the child agents it started (issue 9: delegate and agent-as-tool). */
export interface SessionTreeNode {
  /** The session itself. */
  session: MonitoredSession;
  /** Children in the order they were listed; each may have children of its own. */
  children: SessionTreeNode[];
}

/**
 * Groups sessions under their parent (meta.json `parent_id`), keeping the input order at each
 * level. A child whose parent is not in the list is a root of its own, so nothing is hidden.
 */
export function groupSessions(sessions: readonly MonitoredSession[]): SessionTreeNode[] {
  const nodes = new Map<string, SessionTreeNode>();
  for (const session of sessions) nodes.set(session.id, { session, children: [] });
  const roots: SessionTreeNode[] = [];
  for (const session of sessions) {
    const node = nodes.get(session.id)!;
    const parent =
      session.parentId === undefined || session.parentId === session.id ? undefined : nodes.get(session.parentId);
    if (parent === undefined || createsCycle(nodes, session)) roots.push(node);
    else parent.children.push(node);
  }
  return roots;
}

/** Visits a forest depth first, parents before children, with the depth of each node. */
export function flattenSessionTree(roots: readonly SessionTreeNode[]): { session: MonitoredSession; depth: number }[] {
  const rows: { session: MonitoredSession; depth: number }[] = [];
  const visit = (node: SessionTreeNode, depth: number) => {
    rows.push({ session: node.session, depth });
    for (const child of node.children) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  return rows;
}

/** A hand-edited meta.json could make two sessions each other's parent; such a loop would hide both. */
function createsCycle(nodes: Map<string, SessionTreeNode>, session: MonitoredSession): boolean {
  const seen = new Set<string>([session.id]);
  let parentId = session.parentId;
  while (parentId !== undefined) {
    if (seen.has(parentId)) return true;
    seen.add(parentId);
    parentId = nodes.get(parentId)?.session.parentId;
  }
  return false;
}
