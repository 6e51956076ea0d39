//! Shared test fixtures: a fresh engine on a real SQLite file in a
//! temporary directory, with a manual clock.

#![allow(dead_code)]

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use gatehouse_engine::{Engine, EngineConfig, ManualClock, NewRun, Run};
use tempfile::TempDir;

pub struct Fixture {
    pub engine: Engine,
    pub clock: ManualClock,
    pub dir: TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 1, 9, 0, 0).unwrap());
        let engine =
            Engine::open_with_clock(dir.path().join("gatehouse.db"), EngineConfig::default(), Arc::new(clock.clone()))
                .expect("open engine");
        Self { engine, clock, dir }
    }

    pub fn db_path(&self) -> std::path::PathBuf {
        self.dir.path().join("gatehouse.db")
    }

    pub fn run(&self, agent: &str) -> Run {
        self.engine
            .create_run(NewRun { agent: agent.into(), title: format!("{agent}'s run"), ..NewRun::default() }, agent)
            .expect("create run")
    }

    pub fn run_with(&self, new: NewRun) -> Run {
        let agent = new.agent.clone();
        self.engine.create_run(new, &agent).expect("create run")
    }
}
