// Relay proxies (one-api/new-api and their forks, QuantumNous/new-api PR #2701) renumber the tool
// calls of an answer so that every call says `index: 0`; only the ids tell the calls apart.

/**
 * Whether a delta that names an existing index is in fact a new call: it carries an id, and the
 * call at that index already has a different id and a name.
 */
export function startsNewCallAtSameIndex(existingId: string, existingName: string, incomingId: unknown): boolean {
  return (
    typeof incomingId === 'string' &&
    incomingId !== '' &&
    existingId !== '' &&
    existingName !== '' &&
    incomingId !== existingId
  );
}
