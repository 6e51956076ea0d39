//! The scripted assistant's release story, for a plan that acts: asked to
//! plan a goal that names a release, it plans a migration, a build and a
//! deployment; the migration fails on its first attempt (and succeeds when
//! retried), and the build revises the plan, adding a smoke test before the
//! deployment. Deterministic: the same prompt always gets the same answer.

use serde_json::json;

/// Whether `goal` is the release story's.
pub fn is_release(goal: &str) -> bool {
    goal.to_lowercase().contains("release")
}

/// The release story's plan, as a numbered list.
pub fn release_plan() -> String {
    ["Migrate the database", "Build the new version", "Deploy the new version to production"]
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {s}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The release story's answer to `task` on attempt `attempt` (1 for the first), if it has its own.
pub fn release_task(task: &str, attempt: u32) -> Option<String> {
    let task = task.trim_end_matches('.');
    if task == "Migrate the database" && attempt <= 1 {
        return Some("TASK FAILED: the migration timed out waiting for a lock on `orders`".to_owned());
    }
    if task == "Build the new version" {
        let deploy = json!({"task_id": "task_003", "description": "Deploy the new version to production"});
        let replan = json!(["Smoke-test the new version", deploy]);
        let answer =
            json!({"output": "Built version 2.1.0; the smoke tests are not in the plan yet.", "replan": replan});
        return Some(answer.to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_migration_fails_once_and_the_build_replans() {
        assert!(is_release("Release 2.1 to production"));
        assert!(release_plan().starts_with("1. Migrate the database\n"));
        assert!(release_task("Migrate the database", 1).unwrap().starts_with("TASK FAILED:"));
        assert_eq!(release_task("Migrate the database", 2), None);
        assert!(release_task("Build the new version", 1).unwrap().contains("\"replan\""));
    }
}
