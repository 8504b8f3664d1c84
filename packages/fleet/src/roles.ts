/** Names used by {@link fleetRolesSql}. */
export interface FleetRolesOptions {
  /** The fleet schema (`rho_fleet` by default). */
  schema?: string;
  /** The group role of agents (`rho_fleet_agent`). */
  agentRole?: string;
  /** The group role of operators (`rho_fleet_operator`). */
  operatorRole?: string;
}

/**
 * The GRANT script of a fleet (shipped as `sql/roles.sql` with the default names): two group
 * roles without login, and row-level security on the fleet's tables.
 *
 * - **Agents** (`rho_fleet_agent`): register sessions, update their own registry rows (status,
 *   heartbeat, usage, clearing their cancel), read and acknowledge their own signals, insert and
 *   read their own trace records, record the timeout of their own calls waiting for approval. "Own" is the login role that registered the session
 *   (`owner_role`), enforced by row-level security: give each node, or each trust domain, its own
 *   login role in the group. Agents cannot send signals (no INSERT on `signal_queue`, no UPDATE of
 *   `pause_requested` or `signal_seq`) and cannot read other roles' sessions, signals or records.
 * - **Operators** (`rho_fleet_operator`): read everything (tables and telemetry views), send signals
 *   (lock a registry row, set its flags, append to `signal_queue`), answer waiting tool calls
 *   (`answer_approval`: the first answer of a call wins), and mark sessions dead
 *   (`reconcile`).
 *
 * Run it as the role that owns the schema (the one that ran `rho fleet migrate`, which bypasses
 * row-level security as the owner) after migrating, and again after an upgrade. It is idempotent.
 */
export function fleetRolesSql(options: FleetRolesOptions = {}): string {
  const schema = identifier(options.schema ?? 'rho_fleet');
  const agent = identifier(options.agentRole ?? 'rho_fleet_agent');
  const operator = identifier(options.operatorRole ?? 'rho_fleet_operator');
  const own = `exists (select 1 from ${schema}.agent_registry r where r.session_id = ${'%TABLE%'}.session_id and r.owner_role = current_user)`;
  return `-- Roles of a rho fleet (@rho/fleet). Run as the owner of the schema ${schema}, after rho fleet migrate.
-- Then give each node a login role in ${agent}, and each operator one in ${operator}:
--   create role node_a login password '...' in role ${agent};
--   create role alice login password '...' in role ${operator};
-- Sessions are isolated per login role: agents sharing one login role can see each other's signals.

do $$
begin
  if not exists (select from pg_roles where rolname = '${agent}') then create role ${agent} nologin; end if;
  if not exists (select from pg_roles where rolname = '${operator}') then create role ${operator} nologin; end if;
end
$$;

grant usage on schema ${schema} to ${agent}, ${operator};

-- Agents: their own sessions only (row-level security below), and the schema version.
grant select on ${schema}.schema_migrations to ${agent};
grant select, insert on ${schema}.agent_registry to ${agent};
grant update (parent_id, host, pid, cwd, model, profile, status, labels, first_prompt, updated_at, heartbeat_at,
  gone, cancel_requested, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, records, run_token,
  unpriced_calls)
  on ${schema}.agent_registry to ${agent};
grant select, update (acked_at) on ${schema}.signal_queue to ${agent};
grant select, insert on ${schema}.trace_records to ${agent};
-- An agent records the timeout of its own waiting calls (never changes an answer: no update or delete).
grant select, insert on ${schema}.approval_answers to ${agent};

-- Operators: read all, send signals, mark sessions dead.
grant select on all tables in schema ${schema} to ${operator};
grant update (cancel_requested, pause_requested, signal_seq, updated_at, gone) on ${schema}.agent_registry to ${operator};
grant insert on ${schema}.signal_queue to ${operator};
revoke execute on function ${schema}.send_signal(text, text, jsonb, text) from public;
grant execute on function ${schema}.send_signal(text, text, jsonb, text) to ${operator};
grant insert on ${schema}.approval_answers to ${operator};
revoke execute on function ${schema}.answer_approval(text, text, jsonb, text) from public;
grant execute on function ${schema}.answer_approval(text, text, jsonb, text) to ${operator};

alter table ${schema}.agent_registry enable row level security;
alter table ${schema}.signal_queue enable row level security;
alter table ${schema}.trace_records enable row level security;
alter table ${schema}.approval_answers enable row level security;

drop policy if exists agent_own_sessions on ${schema}.agent_registry;
create policy agent_own_sessions on ${schema}.agent_registry to ${agent}
  using (owner_role = current_user) with check (owner_role = current_user);
drop policy if exists agent_own_signals on ${schema}.signal_queue;
create policy agent_own_signals on ${schema}.signal_queue to ${agent}
  using (${own.replace('%TABLE%', `${schema}.signal_queue`)});
drop policy if exists agent_own_records on ${schema}.trace_records;
create policy agent_own_records on ${schema}.trace_records to ${agent}
  using (${own.replace('%TABLE%', `${schema}.trace_records`)})
  with check (${own.replace('%TABLE%', `${schema}.trace_records`)});
drop policy if exists agent_own_approvals on ${schema}.approval_answers;
create policy agent_own_approvals on ${schema}.approval_answers to ${agent}
  using (${own.replace('%TABLE%', `${schema}.approval_answers`)})
  with check (${own.replace('%TABLE%', `${schema}.approval_answers`)});

drop policy if exists operator_all_sessions on ${schema}.agent_registry;
create policy operator_all_sessions on ${schema}.agent_registry to ${operator} using (true) with check (true);
drop policy if exists operator_all_signals on ${schema}.signal_queue;
create policy operator_all_signals on ${schema}.signal_queue to ${operator} using (true) with check (true);
drop policy if exists operator_all_records on ${schema}.trace_records;
create policy operator_all_records on ${schema}.trace_records to ${operator} using (true);
drop policy if exists operator_all_approvals on ${schema}.approval_answers;
create policy operator_all_approvals on ${schema}.approval_answers to ${operator} using (true) with check (true);
`;
}

function identifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new TypeError(`'${name}' is not a lower-case SQL identifier; fleet roles and schemas use plain names.`);
  return name;
}
