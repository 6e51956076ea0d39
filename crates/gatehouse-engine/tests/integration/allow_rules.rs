//! Allow-rules: a reviewer approves and always allows an agent's action
//! (arguments matching a pattern, for a while or until revoked); later
//! matching approval gates of that agent pass as they open, recorded as
//! `auto_approved` by `rule:<id>`. Other agents, other arguments, expired
//! or revoked rules, and gates that must wait for a human pass nothing.

use crate::common;

use chrono::Duration;
use common::Fixture;
use gatehouse_engine::policy::DecisionType;
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::Store;
use gatehouse_engine::{
    AllowRuleFilter, AllowRuleRequest, AllowRuleStatus, DecisionInput, DecisionOrigin, EngineError, EventKind, Gate,
    GateSpec, GateStatus, NewAllowRule, NewGate, ProposedAction, Quorum, RecordingScope,
};
use serde_json::{json, Value};

fn deploy(args: Value) -> NewGate {
    NewGate::approval("deploy", "Deploy the web app?", args)
}

fn allow(for_secs: Option<u64>) -> AllowRuleRequest {
    AllowRuleRequest { for_secs, args: None, any_args: false, note: None }
}

fn approve_and_allow(rule: AllowRuleRequest) -> DecisionInput {
    DecisionInput { allow_rule: Some(rule), ..DecisionInput::approve() }
}

fn rule_for(agent: &str, action: &str, args: Value) -> NewAllowRule {
    NewAllowRule {
        agent: agent.into(),
        action: action.into(),
        args: Some(args),
        any_args: false,
        for_secs: Some(3600),
        note: None,
    }
}

fn events(f: &Fixture) -> Vec<EventKind> {
    f.engine.events_after(0, &EventFilter::default(), 10_000).unwrap().into_iter().map(|e| e.body.kind).collect()
}

fn invalid_field(err: EngineError) -> String {
    match err {
        EngineError::Invalid { field, .. } => field,
        other => panic!("expected an invalid field, got {other:?}"),
    }
}

fn passed_by(gate: &Gate) -> Option<String> {
    (gate.status == GateStatus::Resolved).then(|| gate.decision.as_ref().unwrap().decided_by.clone())
}

#[test]
fn approving_with_always_allow_makes_a_rule_and_the_next_identical_gate_passes_decided_by_it() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let args = json!({"env": "staging", "version": "1.4.2"});
    let first = f.engine.open_gate(&run.id, deploy(args.clone()), "deployer").unwrap();
    assert_eq!(first.status, GateStatus::Pending);

    let decided = f.engine.resolve_gate(&first.id, approve_and_allow(allow(Some(3600))), "alice").unwrap();
    assert_eq!(decided.decision.as_ref().unwrap().decided_by, "alice");
    let rules = f.engine.allow_rules(&AllowRuleFilter::default()).unwrap();
    assert_eq!(rules.len(), 1);
    let rule = &rules[0];
    assert_eq!((rule.agent.as_str(), rule.action.as_str(), rule.created_by.as_str()), ("deployer", "deploy", "alice"));
    assert_eq!(rule.args, Some(args.clone()), "by default exactly the arguments approved");
    assert_eq!(rule.gate_id.as_ref(), Some(&first.id));
    assert_eq!(rule.expires_at, Some(f.engine.now() + Duration::hours(1)));
    assert_eq!(rule.status, AllowRuleStatus::Live);

    let second = f.engine.open_gate(&run.id, deploy(args), "deployer").unwrap();
    assert_eq!(second.status, GateStatus::Resolved, "passed as it opened");
    let decision = second.decision.as_ref().unwrap();
    assert_eq!(decision.decided_by, format!("rule:{}", rule.id));
    assert_eq!(decision.decision_type(), DecisionType::AutoApproved);
    let DecisionOrigin::Auto { reason } = &decision.origin else { panic!("auto, got {:?}", decision.origin) };
    assert!(reason.contains(rule.id.as_str()) && reason.contains("alice"), "{reason}");
    assert_eq!(f.engine.gate(&second.id).unwrap().status, GateStatus::Resolved, "stored as passed");

    let used = f.engine.allow_rule(&rule.id).unwrap();
    assert_eq!((used.uses, used.last_used_at), (1, Some(f.engine.now())));
    let log = f.engine.events_after(0, &EventFilter::default(), 10_000).unwrap();
    let resolved = log.iter().find(|e| matches!(e.body.kind, EventKind::GateResolved { .. })).expect("decision event");
    let created = log.iter().find(|e| matches!(e.body.kind, EventKind::AllowRuleCreated { .. })).expect("rule event");
    assert!(created.seq > resolved.seq, "made with the decision, after it");
    assert_eq!((created.body.at, created.body.actor.as_str()), (resolved.body.at, "alice"));
    assert_eq!(created.body.run_id.as_ref(), Some(&run.id), "on the decided gate's run");
    let last = &log.last().unwrap().body.kind;
    assert!(matches!(last, EventKind::GateAutoPassed { decision, .. } if decision.decided_by == used.decider()));
    assert!(f.engine.verify_audit().unwrap().problems.is_empty());
}

#[test]
fn a_refused_decision_makes_no_rule_and_a_bad_rule_refuses_the_decision() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let gate = f.engine.open_gate(&run.id, deploy(json!({"env": "prod"})), "deployer").unwrap();

    let err = f.engine.resolve_gate(&gate.id, approve_and_allow(allow(Some(0))), "alice").unwrap_err();
    assert_eq!(invalid_field(err), "allow_rule.for_secs");
    let pattern = AllowRuleRequest { args: Some(json!({"env": "staging"})), ..allow(None) };
    let err = f.engine.resolve_gate(&gate.id, approve_and_allow(pattern), "alice").unwrap_err();
    assert_eq!(invalid_field(err), "allow_rule.args", "a pattern must match what is approved");
    let both = AllowRuleRequest { args: Some(json!({"env": "*"})), any_args: true, ..allow(None) };
    assert_eq!(
        invalid_field(f.engine.resolve_gate(&gate.id, approve_and_allow(both), "alice").unwrap_err()),
        "allow_rule.args"
    );
    let rejecting = DecisionInput { allow_rule: Some(allow(None)), ..DecisionInput::reject("no") };
    assert_eq!(invalid_field(f.engine.resolve_gate(&gate.id, rejecting, "alice").unwrap_err()), "allow_rule");
    assert_eq!(f.engine.gate(&gate.id).unwrap().status, GateStatus::Pending, "nothing was decided");
    assert!(f.engine.allow_rules(&AllowRuleFilter::default()).unwrap().is_empty());

    // A question is no approval; a late decision on a closed gate makes no rule either.
    let question = f.engine.open_gate(&run.id, NewGate::question("Which region?"), "deployer").unwrap();
    let answer = DecisionInput { allow_rule: Some(allow(None)), ..DecisionInput::respond("eu") };
    assert_eq!(invalid_field(f.engine.resolve_gate(&question.id, answer, "alice").unwrap_err()), "allow_rule");
    f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "bob").unwrap();
    let late = f.engine.resolve_gate(&gate.id, approve_and_allow(allow(None)), "alice").unwrap_err();
    assert!(matches!(late, EngineError::GateClosed { .. }), "{late:?}");
    assert!(f.engine.allow_rules(&AllowRuleFilter::default()).unwrap().is_empty());
}

#[test]
fn arguments_must_match_the_pattern_with_exactly_its_keys() {
    let f = Fixture::new();
    let run = f.run("deployer");
    f.engine
        .create_allow_rule(rule_for("deployer", "deploy", json!({"env": "staging", "version": "1.*"})), "alice")
        .unwrap();
    let open = |args: Value| f.engine.open_gate(&run.id, deploy(args), "deployer").unwrap().status;

    assert_eq!(open(json!({"env": "staging", "version": "1.9"})), GateStatus::Resolved);
    assert_eq!(open(json!({"env": "prod", "version": "1.9"})), GateStatus::Pending, "another value");
    assert_eq!(open(json!({"env": "staging", "version": "2.0"})), GateStatus::Pending, "outside the glob");
    assert_eq!(open(json!({"env": "staging"})), GateStatus::Pending, "a missing key");
    assert_eq!(open(json!({"env": "staging", "version": "1.9", "force": true})), GateStatus::Pending, "an extra key");
    let other_action = f
        .engine
        .open_gate(
            &run.id,
            NewGate::approval("rollback", "Roll back?", json!({"env": "staging", "version": "1.9"})),
            "deployer",
        )
        .unwrap();
    assert_eq!(other_action.status, GateStatus::Pending, "another action");
}

#[test]
fn a_rule_passes_only_its_own_agents_gates_opened_by_that_agent() {
    let f = Fixture::new();
    f.engine.create_allow_rule(rule_for("deployer", "deploy", json!({"env": "staging"})), "alice").unwrap();
    let theirs = f.run("intruder");
    let gate = f.engine.open_gate(&theirs.id, deploy(json!({"env": "staging"})), "intruder").unwrap();
    assert_eq!(gate.status, GateStatus::Pending, "another agent");

    // Naming the agent is not being it: the gate's agent must be who opened it.
    let mut posing = deploy(json!({"env": "staging"}));
    posing.agent = Some("deployer".into());
    let gate = f.engine.open_gate(&theirs.id, posing, "intruder").unwrap();
    assert_eq!((gate.agent.as_str(), gate.status), ("deployer", GateStatus::Pending));
}

#[test]
fn expired_and_revoked_rules_pass_nothing_and_listings_say_so() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let short = f.engine.create_allow_rule(rule_for("deployer", "deploy", json!({"env": "staging"})), "alice").unwrap();
    let mut forever = rule_for("deployer", "deploy", json!({"env": "prod"}));
    forever.for_secs = None;
    let forever = f.engine.create_allow_rule(forever, "alice").unwrap();
    assert_eq!(forever.expires_at, None);

    f.clock.advance(Duration::seconds(3600));
    let gate = f.engine.open_gate(&run.id, deploy(json!({"env": "staging"})), "deployer").unwrap();
    assert_eq!(gate.status, GateStatus::Pending, "expired on the hour");
    assert_eq!(f.engine.allow_rule(&short.id).unwrap().status, AllowRuleStatus::Expired);
    let prod = f.engine.open_gate(&run.id, deploy(json!({"env": "prod"})), "deployer").unwrap();
    assert_eq!(prod.status, GateStatus::Resolved, "until revoked");

    let revoked = f.engine.revoke_allow_rule(&forever.id, "bob").unwrap();
    assert_eq!((revoked.status, revoked.revoked_by.as_deref()), (AllowRuleStatus::Revoked, Some("bob")));
    let again = f.engine.revoke_allow_rule(&forever.id, "carol").unwrap();
    assert_eq!(again.revoked_by.as_deref(), Some("bob"), "revoking twice changes nothing");
    assert_eq!(events(&f).iter().filter(|k| matches!(k, EventKind::AllowRuleRevoked { .. })).count(), 1);
    let prod = f.engine.open_gate(&run.id, deploy(json!({"env": "prod"})), "deployer").unwrap();
    assert_eq!(prod.status, GateStatus::Pending, "revoked at once");

    let listed = |status| {
        let filter = AllowRuleFilter { status: Some(status), ..AllowRuleFilter::default() };
        f.engine.allow_rules(&filter).unwrap().into_iter().map(|r| r.id).collect::<Vec<_>>()
    };
    assert_eq!(listed(AllowRuleStatus::Expired), std::slice::from_ref(&short.id));
    assert_eq!(listed(AllowRuleStatus::Revoked), std::slice::from_ref(&forever.id));
    assert!(listed(AllowRuleStatus::Live).is_empty());
    let theirs = AllowRuleFilter { agent: Some("someone-else".into()), ..AllowRuleFilter::default() };
    assert!(f.engine.allow_rules(&theirs).unwrap().is_empty());
    let all = f.engine.allow_rules(&AllowRuleFilter::default()).unwrap();
    assert_eq!(all.iter().map(|r| r.uses).collect::<Vec<_>>(), [1, 0], "newest first, with their uses");
    assert!(matches!(
        f.engine.revoke_allow_rule(&"allow_missing".into(), "bob").unwrap_err(),
        EngineError::NotFound { .. }
    ));
}

#[test]
fn gates_that_require_a_human_a_quorum_named_deciders_or_an_unfit_payload_always_wait() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let mut any = rule_for("deployer", "deploy", json!({}));
    (any.args, any.any_args) = (None, true);
    f.engine.create_allow_rule(any, "alice").unwrap();
    assert_eq!(f.engine.open_gate(&run.id, deploy(json!({"x": 1})), "deployer").unwrap().status, GateStatus::Resolved);

    let mut human = deploy(json!({"x": 1}));
    human.requires_human = true;
    let mut quorum = deploy(json!({"x": 1}));
    quorum.quorum = Some(Quorum { required: 2, rejections_to_reject: 1 });
    let mut named = deploy(json!({"x": 1}));
    named.deciders = vec!["role:sre".into()];
    let mut unfit = deploy(json!({"x": 1}));
    unfit.payload_schema = Some(json!({"type": "object", "properties": {"x": {"type": "string"}}}));
    for new in [human, quorum, named, unfit] {
        assert_eq!(f.engine.open_gate(&run.id, new, "deployer").unwrap().status, GateStatus::Pending);
    }
}

fn call(id: &str, name: &str, args: Value) -> ProposedAction {
    serde_json::from_value(json!({"id": id, "name": name, "args": args})).unwrap()
}

fn calls(actions: Vec<ProposedAction>) -> NewGate {
    let mut gate = NewGate::new(GateSpec::Approval { action: "tool_calls".into() }, "Run these tool calls?");
    gate.actions = actions;
    gate
}

#[test]
fn a_gate_of_several_actions_passes_only_when_every_action_is_allowed() {
    let f = Fixture::new();
    let run = f.run("coder");
    let read = f.engine.create_allow_rule(rule_for("coder", "read_file", json!({"path": "src/*"})), "alice").unwrap();
    let ls = f.engine.create_allow_rule(rule_for("coder", "list_dir", json!({"path": "*"})), "bob").unwrap();

    let some =
        calls(vec![call("c1", "read_file", json!({"path": "src/a.rs"})), call("c2", "shell", json!({"cmd": "ls"}))]);
    assert_eq!(f.engine.open_gate(&run.id, some, "coder").unwrap().status, GateStatus::Pending, "one is not allowed");
    let outside = calls(vec![call("c1", "read_file", json!({"path": "/etc/passwd"}))]);
    assert_eq!(f.engine.open_gate(&run.id, outside, "coder").unwrap().status, GateStatus::Pending);

    let all = calls(vec![
        call("c1", "read_file", json!({"path": "src/a.rs"})),
        call("c2", "list_dir", json!({"path": "."})),
        call("c3", "read_file", json!({"path": "src/b.rs"})),
    ]);
    let gate = f.engine.open_gate(&run.id, all, "coder").unwrap();
    assert_eq!(passed_by(&gate), Some(format!("rule:{}", read.id)));
    let by: Vec<_> = gate.actions.iter().map(|a| a.decision.as_ref().unwrap().decided_by.clone()).collect();
    assert_eq!(by, [format!("rule:{}", read.id), format!("rule:{}", ls.id), format!("rule:{}", read.id)]);
    assert_eq!(gate.decision.as_ref().unwrap().actions.len(), 3);
    assert_eq!(f.engine.allow_rule(&read.id).unwrap().uses, 1, "one use per gate");
    assert_eq!(f.engine.allow_rule(&ls.id).unwrap().uses, 1);
}

#[test]
fn approving_a_gate_of_several_actions_allows_each_with_its_own_arguments() {
    let f = Fixture::new();
    let run = f.run("coder");
    let actions = || {
        vec![
            call("c1", "read_file", json!({"path": "a.txt"})),
            call("c2", "read_file", json!({"path": "a.txt"})),
            call("c3", "write_file", json!({"path": "b.txt"})),
        ]
    };
    let gate = f.engine.open_gate(&run.id, calls(actions()), "coder").unwrap();
    let pattern = AllowRuleRequest { args: Some(json!({"path": "*"})), ..allow(None) };
    let err = f.engine.resolve_gate(&gate.id, approve_and_allow(pattern), "alice").unwrap_err();
    assert_eq!(invalid_field(err), "allow_rule.args");
    f.engine.resolve_gate(&gate.id, approve_and_allow(allow(Some(900))), "alice").unwrap();
    let rules = f.engine.allow_rules(&AllowRuleFilter::default()).unwrap();
    let mut made: Vec<_> = rules.iter().map(|r| (r.action.clone(), r.args.clone())).collect();
    made.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        made,
        [("read_file".into(), Some(json!({"path": "a.txt"}))), ("write_file".into(), Some(json!({"path": "b.txt"})))]
    );
    assert_eq!(f.engine.open_gate(&run.id, calls(actions()), "coder").unwrap().status, GateStatus::Resolved);
}

#[test]
fn an_edit_allows_the_edited_arguments_and_literal_stars_stay_literal() {
    let f = Fixture::new();
    let run = f.run("analyst");
    let query = |sql: &str| NewGate::approval("sql", "Run this query?", json!({"sql": sql}));
    let gate = f.engine.open_gate(&run.id, query("SELECT * FROM users"), "analyst").unwrap();
    let edited = DecisionInput {
        allow_rule: Some(allow(None)),
        ..DecisionInput::edit(json!({"sql": "SELECT * FROM users LIMIT 10"}))
    };
    f.engine.resolve_gate(&gate.id, edited, "alice").unwrap();
    let rule = f.engine.allow_rules(&AllowRuleFilter::default()).unwrap().remove(0);
    assert_eq!(rule.args, Some(json!({"sql": r"SELECT \* FROM users LIMIT 10"})), "the star escaped");

    let open = |sql: &str| f.engine.open_gate(&run.id, query(sql), "analyst").unwrap().status;
    assert_eq!(open("SELECT * FROM users"), GateStatus::Pending, "the original, not the edit");
    assert_eq!(
        open("SELECT password FROM users LIMIT 10"),
        GateStatus::Pending,
        "a star in the approved text is no glob"
    );
    assert_eq!(open("SELECT * FROM users LIMIT 10"), GateStatus::Resolved);
}

#[test]
fn rules_made_directly_are_checked_naming_the_field() {
    let f = Fixture::new();
    let err = |new: NewAllowRule| invalid_field(f.engine.create_allow_rule(new, "alice").unwrap_err());
    assert_eq!(err(NewAllowRule { agent: " ".into(), ..rule_for("a", "deploy", json!({})) }), "agent");
    assert_eq!(err(NewAllowRule { action: String::new(), ..rule_for("a", "deploy", json!({})) }), "action");
    assert_eq!(err(NewAllowRule { args: None, ..rule_for("a", "deploy", json!({})) }), "args");
    assert_eq!(err(NewAllowRule { any_args: true, ..rule_for("a", "deploy", json!({})) }), "args");
    assert_eq!(err(NewAllowRule { for_secs: Some(0), ..rule_for("a", "deploy", json!({})) }), "for_secs");
    assert_eq!(err(NewAllowRule { note: Some("x".repeat(1001)), ..rule_for("a", "deploy", json!({})) }), "note");
    assert!(f.engine.allow_rules(&AllowRuleFilter::default()).unwrap().is_empty());
}

#[test]
fn a_rule_made_while_deciding_travels_with_its_runs_recording() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let gate = f.engine.open_gate(&run.id, deploy(json!({"env": "staging"})), "deployer").unwrap();
    f.engine.resolve_gate(&gate.id, approve_and_allow(allow(Some(60))), "alice").unwrap();
    f.engine.open_gate(&run.id, deploy(json!({"env": "staging"})), "deployer").unwrap();
    let rule = f.engine.allow_rules(&AllowRuleFilter::default()).unwrap().remove(0);
    f.engine.revoke_allow_rule(&rule.id, "alice").unwrap();

    let recording = f.engine.export(RecordingScope::Run { run_id: run.id.clone() }).unwrap();
    let kinds: Vec<&str> = recording.events.iter().map(|e| e.kind.name()).collect();
    assert!(kinds.contains(&"allow_rule_created"), "{kinds:?}");
    assert!(!kinds.contains(&"allow_rule_revoked"), "bookkeeping stays home");

    let other = Fixture::new();
    let summary = other.engine.import(recording, "importer").unwrap();
    assert_eq!(summary.gates, 2);
    assert!(other.engine.allow_rules(&AllowRuleFilter::default()).unwrap().is_empty(), "history, not a live rule");
}

#[test]
fn a_rule_for_arguments_holding_a_secret_matches_them_as_stored_redacted() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let args = json!({"env": "prod", "auth": "Bearer abcdefgh12345678", "api_key": "k-1"});
    let first = f.engine.open_gate(&run.id, deploy(args.clone()), "deployer").unwrap();
    assert_eq!(first.payload, Some(json!({"env": "prod", "auth": "Bearer [REDACTED]", "api_key": "[REDACTED]"})));
    f.engine.resolve_gate(&first.id, approve_and_allow(allow(Some(3600))), "alice").unwrap();
    let second = f.engine.open_gate(&run.id, deploy(args), "deployer").unwrap();
    assert_eq!(second.status, GateStatus::Resolved, "the same arguments, redacted alike, pass");

    // A rule made directly is redacted the same way, whatever the secret.
    let run = f.run("builder");
    let rule = rule_for("builder", "build", json!({"token": "other", "url": "https://u:p@host/x"}));
    f.engine.create_allow_rule(rule, "alice").unwrap();
    let gate = NewGate::approval("build", "Build?", json!({"token": "mine", "url": "https://u:q@host/x"}));
    let gate = f.engine.open_gate(&run.id, gate, "builder").unwrap();
    assert_eq!(gate.status, GateStatus::Resolved, "{:?}", gate.payload);
}

/// The live rules' ids in each list, in order.
fn rule_ids(lists: &[Vec<gatehouse_engine::AllowRule>]) -> Vec<Vec<String>> {
    lists.iter().map(|rules| rules.iter().map(|r| r.id.to_string()).collect()).collect()
}

#[test]
fn a_gate_about_to_open_reads_its_run_the_openers_live_rules_and_its_retrys_gate_together_in_one_round_trip() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let mut retried = NewGate::approval("note", "Noted?", json!({}));
    retried.idempotency_key = Some("note-1".into());
    let retried = f.engine.open_gate(&run.id, retried, "deployer").unwrap();
    let key = retried.idempotency_key.clone().expect("kept as a digest");
    let make = |agent: &str, action: &str| f.engine.create_allow_rule(rule_for(agent, action, json!({})), "alice");
    let first = make("deployer", "deploy").unwrap();
    let second = make("deployer", "deploy").unwrap();
    let scale = make("deployer", "scale").unwrap();
    let revoked = make("deployer", "scale").unwrap();
    f.engine.revoke_allow_rule(&revoked.id, "alice").unwrap();
    make("other-agent", "deploy").unwrap();
    let now = f.engine.now();
    let actions = ["deploy", "scale", "rollback", "deploy"];
    // Five writes, the fewest round trips of any: a writer connection's
    // first use of a statement prepares it (a round trip of its own), and
    // with two writers, one of them serves a second write.
    let mut fewest = u64::MAX;
    let mut read = None;
    for _ in 0..5 {
        let (engine, run_id, key) = (f.engine.clone(), run.id.clone(), key.clone());
        let (together, apart, trips) = f
            .engine
            .store()
            .write(move |tx| {
                let trips = || engine.store_stats().map_or(0, |s| s.round_trips);
                let before = trips();
                let read = tx.reads_before_open(&run_id, "deployer", &actions, Some(&key), now)?;
                let trips = trips() - before;
                let apart =
                    actions.iter().map(|a| tx.live_allow_rules("deployer", a, now)).collect::<Result<Vec<_>, _>>()?;
                let unused = tx.reads_before_open(&run_id, "deployer", &[], Some("unused"), now)?.existing;
                assert!(unused.is_none(), "no gate was opened with that key");
                Ok((read.run.map(|r| r.id).zip(Some((read.rules, read.existing))), apart, trips))
            })
            .unwrap();
        fewest = fewest.min(trips);
        read = Some((together, apart));
    }
    let (together, apart) = read.unwrap();
    let (read, (together, existing)) = together.expect("the run was read");
    assert_eq!(read, run.id);
    assert_eq!(existing.map(|g| g.id), Some(retried.id), "the gate opened with the key, for its retry");
    let (deploy, scale) = (vec![first.id.to_string(), second.id.to_string()], vec![scale.id.to_string()]);
    let expected = vec![deploy.clone(), scale, Vec::new(), deploy];
    assert_eq!(rule_ids(&together), expected, "each action's live rules of this agent, oldest first");
    assert_eq!(rule_ids(&apart), expected, "as each action's read alone gives them");
    match f.is_postgres() {
        true => assert_eq!(fewest, 1, "the run, four actions' rules and the key's gate in one wait"),
        false => assert_eq!(fewest, 0, "SQLite, in the process, has no round trips"),
    }
}
