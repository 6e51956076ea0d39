//! `serve`'s alert and SLA flags (`--alert-*`, `--sla-*`-minutes): the
//! thresholds the server's sweep checks and the decision targets per
//! priority its metrics measure compliance with (`gatehouse-server`'s
//! `alerts.rs`). Every alert is off unless its flag is given.

use anyhow::Result;
use clap::Args;
use gatehouse_engine::SlaTargets;
use gatehouse_server::alerts::AlertConfig;

/// The alert thresholds and SLA targets, as flags.
#[derive(Debug, Clone, Args)]
pub struct AlertArgs {
    /// Raise an alert when a sync gate (its agent blocked) has waited longer than this many minutes.
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u32).range(1..))]
    pub alert_sync_wait_minutes: Option<u32>,
    /// Raise an alert when more than this many gates are pending.
    #[arg(long, value_name = "N")]
    pub alert_pending: Option<u64>,
    /// Raise an alert when more than this percentage of the gates opened over the alert window passed
    /// without a person (a policy or an allow-rule).
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub alert_auto_pass_percent: Option<f64>,
    /// Raise an alert when more than this many webhook deliveries failed over the alert window.
    #[arg(long, value_name = "N")]
    pub alert_webhook_failures: Option<u64>,
    /// The window of the auto-pass rate and webhook failure alerts, in minutes.
    #[arg(long, default_value_t = 60, value_name = "MINUTES", value_parser = clap::value_parser!(u32).range(1..))]
    pub alert_window_minutes: u32,
    /// SLA target for low-priority gates: minutes from opening to a person's decision. [default: 1440]
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub sla_low_minutes: Option<u64>,
    /// SLA target for normal-priority gates, in minutes. [default: 240]
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub sla_normal_minutes: Option<u64>,
    /// SLA target for high-priority gates, in minutes. [default: 60]
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub sla_high_minutes: Option<u64>,
    /// SLA target for urgent gates, in minutes. [default: 15]
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub sla_urgent_minutes: Option<u64>,
}

fn parse_percent(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("must be a percentage from 0 to 100, got `{raw}`")),
    }
}

impl AlertArgs {
    /// The server's alert configuration.
    pub fn config(&self) -> AlertConfig {
        let defaults = SlaTargets::default();
        let ms = |minutes: Option<u64>, default: u64| minutes.map_or(default, |m| m.saturating_mul(60_000));
        AlertConfig {
            sync_gate_waiting_minutes: self.alert_sync_wait_minutes,
            pending_queue: self.alert_pending,
            auto_pass_rate_percent: self.alert_auto_pass_percent,
            webhook_failures: self.alert_webhook_failures,
            window_minutes: self.alert_window_minutes,
            sla: SlaTargets {
                low_ms: ms(self.sla_low_minutes, defaults.low_ms),
                normal_ms: ms(self.sla_normal_minutes, defaults.normal_ms),
                high_ms: ms(self.sla_high_minutes, defaults.high_ms),
                urgent_ms: ms(self.sla_urgent_minutes, defaults.urgent_ms),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AlertArgs;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        alerts: AlertArgs,
    }

    fn parse(args: &[&str]) -> Result<AlertArgs, String> {
        Flags::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
            .map(|f| f.alerts)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn alerts_are_off_unless_given_and_targets_default_per_priority() {
        let config = parse(&[]).unwrap().config();
        assert!(!config.any());
        assert_eq!((config.sla.urgent_ms, config.window_minutes), (15 * 60_000, 60));
        let config = parse(&["--alert-pending", "50", "--sla-urgent-minutes", "5"]).unwrap().config();
        assert_eq!((config.pending_queue, config.sla.urgent_ms), (Some(50), 300_000));
    }

    #[test]
    fn a_percentage_over_a_hundred_is_refused_naming_the_flag() {
        let error = parse(&["--alert-auto-pass-percent", "120"]).unwrap_err();
        assert!(error.contains("--alert-auto-pass-percent") && error.contains("0 to 100"), "{error}");
    }
}
