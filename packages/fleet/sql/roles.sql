-- Roles of a rho fleet (@rho/fleet). Run as the owner of the schema rho_fleet, after rho fleet migrate.
-- Then give each node a login role in rho_fleet_agent, and each operator one in rho_fleet_operator:
--   create role node_a login password '...' in role rho_fleet_agent;
--   create role alice login password '...' in role rho_fleet_operator;
-- Sessions are isolated per login role: agents sharing one login role can see each other's signals.

do $$
begin
  if not exists (select from pg_roles where rolname = 'rho_fleet_agent') then create role rho_fleet_agent nologin; end if;
  if not exists (select from pg_roles where rolname = 'rho_fleet_operator') then create role rho_fleet_operator nologin; end if;
end
$$;

grant usage on schema rho_fleet to rho_fleet_agent, rho_fleet_operator;

-- Agents: their own sessions only (row-level security below), and the schema version.
grant select on rho_fleet.schema_migrations to rho_fleet_agent;
grant select, insert on rho_fleet.agent_registry to rho_fleet_agent;
grant update (parent_id, host, pid, cwd, model, profile, status, labels, first_prompt, updated_at, heartbeat_at,
  gone, cancel_requested, input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, records, run_token,
  unpriced_calls)
  on rho_fleet.agent_registry to rho_fleet_agent;
grant select, update (acked_at) on rho_fleet.signal_queue to rho_fleet_agent;
grant select, insert on rho_fleet.trace_records to rho_fleet_agent;
-- An agent records the timeout of its own waiting calls (never changes an answer: no update or delete).
grant select, insert on rho_fleet.approval_answers to rho_fleet_agent;

-- Operators: read all, send signals, mark sessions dead.
grant select on all tables in schema rho_fleet to rho_fleet_operator;
grant update (cancel_requested, pause_requested, signal_seq, updated_at, gone) on rho_fleet.agent_registry to rho_fleet_operator;
grant insert on rho_fleet.signal_queue to rho_fleet_operator;
revoke execute on function rho_fleet.send_signal(text, text, jsonb, text) from public;
grant execute on function rho_fleet.send_signal(text, text, jsonb, text) to rho_fleet_operator;
grant insert on rho_fleet.approval_answers to rho_fleet_operator;
revoke execute on function rho_fleet.answer_approval(text, text, jsonb, text) from public;
grant execute on function rho_fleet.answer_approval(text, text, jsonb, text) to rho_fleet_operator;

alter table rho_fleet.agent_registry enable row level security;
alter table rho_fleet.signal_queue enable row level security;
alter table rho_fleet.trace_records enable row level security;
alter table rho_fleet.approval_answers enable row level security;

drop policy if exists agent_own_sessions on rho_fleet.agent_registry;
create policy agent_own_sessions on rho_fleet.agent_registry to rho_fleet_agent
  using (owner_role = current_user) with check (owner_role = current_user);
drop policy if exists agent_own_signals on rho_fleet.signal_queue;
create policy agent_own_signals on rho_fleet.signal_queue to rho_fleet_agent
  using (exists (select 1 from rho_fleet.agent_registry r where r.session_id = rho_fleet.signal_queue.session_id and r.owner_role = current_user));
drop policy if exists agent_own_records on rho_fleet.trace_records;
create policy agent_own_records on rho_fleet.trace_records to rho_fleet_agent
  using (exists (select 1 from rho_fleet.agent_registry r where r.session_id = rho_fleet.trace_records.session_id and r.owner_role = current_user))
  with check (exists (select 1 from rho_fleet.agent_registry r where r.session_id = rho_fleet.trace_records.session_id and r.owner_role = current_user));
drop policy if exists agent_own_approvals on rho_fleet.approval_answers;
create policy agent_own_approvals on rho_fleet.approval_answers to rho_fleet_agent
  using (exists (select 1 from rho_fleet.agent_registry r where r.session_id = rho_fleet.approval_answers.session_id and r.owner_role = current_user))
  with check (exists (select 1 from rho_fleet.agent_registry r where r.session_id = rho_fleet.approval_answers.session_id and r.owner_role = current_user));

drop policy if exists operator_all_sessions on rho_fleet.agent_registry;
create policy operator_all_sessions on rho_fleet.agent_registry to rho_fleet_operator using (true) with check (true);
drop policy if exists operator_all_signals on rho_fleet.signal_queue;
create policy operator_all_signals on rho_fleet.signal_queue to rho_fleet_operator using (true) with check (true);
drop policy if exists operator_all_records on rho_fleet.trace_records;
create policy operator_all_records on rho_fleet.trace_records to rho_fleet_operator using (true);
drop policy if exists operator_all_approvals on rho_fleet.approval_answers;
create policy operator_all_approvals on rho_fleet.approval_answers to rho_fleet_operator using (true) with check (true);
