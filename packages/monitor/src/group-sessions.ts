import type { ListedSession } from './listed-session.js';

/** A session with the child agents it started (issue 9: delegate and agent-as-tool). */
export interface SessionTreeNode<S extends Pick<ListedSession, 'id' | 'parentId'> = ListedSession> {
  /** The session itself. */
  session: S;
  /** Children in the order they were listed; each may have children of its own. */
  children: SessionTreeNode<S>[];
}

/**
 * Groups sessions under their parent (meta.json `parent_id`), keeping the input order at each
 * level. A child whose parent is not in the list is a root of its own, so nothing is hidden.
 */
export function groupSessions<S extends Pick<ListedSession, 'id' | 'parentId'>>(
  sessions: readonly S[],
): SessionTreeNode<S>[] {
  const nodes = new Map<string, SessionTreeNode<S>>();
  for (const session of sessions) nodes.set(session.id, { session, children: [] });
  const roots: SessionTreeNode<S>[] = [];
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
export function flattenSessionTree<S extends Pick<ListedSession, 'id' | 'parentId'>>(
  roots: readonly SessionTreeNode<S>[],
): { session: S; depth: number }[] {
  const rows: { session: S; depth: number }[] = [];
  const visit = (node: SessionTreeNode<S>, depth: number) => {
    rows.push({ session: node.session, depth });
    for (const child of node.children) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  return rows;
}

/** A hand-edited meta.json could make two sessions each other's parent; such a loop would hide both. */
function createsCycle<S extends Pick<ListedSession, 'id' | 'parentId'>>(
  nodes: Map<string, SessionTreeNode<S>>,
  session: S,
): boolean {
  const seen = new Set<string>([session.id]);
  let parentId = session.parentId;
  while (parentId !== undefined) {
    if (seen.has(parentId)) return true;
    seen.add(parentId);
    parentId = nodes.get(parentId)?.session.parentId;
  }
  return false;
}
