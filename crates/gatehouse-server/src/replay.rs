//! Live replay: a recording's events played again, in order, with their
//! original gaps divided by a speed, to whoever follows the replay's own
//! event stream (`GET /replays/{id}/events`, `routes/replays.rs`). Replayed
//! events are frames marked `replay: true` on a stream of their own: never
//! appended to the log, never on `GET /events`, so nothing mistakes them for
//! live work and stored runs and the audit chain are untouched.
//!
//! [`Player`] is the timing, a pure state machine over an injected clock
//! reading (tests move it by hand); [`Replays`] holds the sessions and
//! drives each on a task that sleeps until the next event is due.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gatehouse_engine::EventBody;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, Notify};
use utoipa::ToSchema;

/// The fastest a replay may run.
pub const MAX_SPEED: f64 = 1000.0;
/// Replays held at once (ended and idle ones are forgotten first).
pub const MAX_REPLAYS: usize = 16;
/// A replay nobody has controlled for this long may be stopped to make room.
pub const IDLE_AFTER: Duration = Duration::from_secs(60 * 60);

/// Where a replay stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlayState {
    /// Events come as they fall due.
    Playing,
    /// Held; `step` sends the next event.
    Paused,
    /// Every event was sent.
    Finished,
    /// Stopped by a person.
    Stopped,
}

impl PlayState {
    /// Whether the replay has ended.
    pub fn ended(self) -> bool {
        matches!(self, Self::Finished | Self::Stopped)
    }
}

/// One replayed event, as the replay's stream sends it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReplayFrame {
    /// Always `true`: this is a past event played again, not live work.
    pub replay: bool,
    /// The replay it belongs to.
    pub replay_id: String,
    /// Its place in the recording, from 0.
    pub index: usize,
    /// How many events the recording holds.
    pub total: usize,
    /// Milliseconds after the recording's first event it originally happened.
    pub offset_ms: u64,
    /// The event as recorded (its original time in `at`).
    pub event: EventBody,
}

/// The timing of one replay. Clock readings are durations since any fixed
/// start; the recording's position advances by `speed` times the clock.
#[derive(Debug, Clone)]
pub struct Player {
    offsets: Vec<Duration>,
    next: usize,
    speed: f64,
    state: PlayState,
    /// The clock reading and the recording position at the last change.
    anchor_clock: Duration,
    anchor_offset: Duration,
}

impl Player {
    /// A player over events at `times` (in order), starting at clock `now`, paused or playing.
    pub fn new(times: &[chrono::DateTime<chrono::Utc>], speed: f64, now: Duration, paused: bool) -> Self {
        let first = times.first().copied();
        let offsets =
            times.iter().map(|t| first.map(|f| (*t - f).to_std().unwrap_or_default()).unwrap_or_default()).collect();
        let state = if paused { PlayState::Paused } else { PlayState::Playing };
        Self { offsets, next: 0, speed, state, anchor_clock: now, anchor_offset: Duration::ZERO }
    }

    /// The recording position at clock `now`.
    pub fn position(&self, now: Duration) -> Duration {
        match self.state {
            PlayState::Playing => self.anchor_offset + now.saturating_sub(self.anchor_clock).mul_f64(self.speed),
            _ => self.anchor_offset,
        }
    }

    /// The events due by `now`, by index, in order; the player finishes after the last.
    pub fn due(&mut self, now: Duration) -> Vec<usize> {
        if self.state != PlayState::Playing {
            return Vec::new();
        }
        let at = self.position(now);
        let mut due = Vec::new();
        while self.next < self.offsets.len() && self.offsets[self.next] <= at {
            due.push(self.next);
            self.next += 1;
        }
        self.finish_if_done();
        due
    }

    /// How long on the clock until the next event falls due; `None` when nothing will.
    pub fn next_due_in(&self, now: Duration) -> Option<Duration> {
        if self.state != PlayState::Playing {
            return None;
        }
        let next = *self.offsets.get(self.next)?;
        Some(next.saturating_sub(self.position(now)).div_f64(self.speed))
    }

    /// Holds the replay where it is.
    pub fn pause(&mut self, now: Duration) {
        if self.state == PlayState::Playing {
            self.reanchor(now);
            self.state = PlayState::Paused;
        }
    }

    /// Plays on from where it was held.
    pub fn resume(&mut self, now: Duration) {
        if self.state == PlayState::Paused {
            self.anchor_clock = now;
            self.state = PlayState::Playing;
        }
    }

    /// Pauses and sends the next event; the position moves to it.
    pub fn step(&mut self, now: Duration) -> Option<usize> {
        if self.state.ended() {
            return None;
        }
        self.pause(now);
        let index = self.next;
        let offset = *self.offsets.get(index)?;
        self.next += 1;
        self.anchor_offset = offset;
        self.finish_if_done();
        Some(index)
    }

    /// Plays at `speed` from now on (the position so far is kept).
    pub fn set_speed(&mut self, speed: f64, now: Duration) {
        self.reanchor(now);
        self.speed = speed;
    }

    /// Ends the replay.
    pub fn stop(&mut self) {
        if !self.state.ended() {
            self.state = PlayState::Stopped;
        }
    }

    /// Where it stands.
    pub fn state(&self) -> PlayState {
        self.state
    }

    /// Events sent so far.
    pub fn sent(&self) -> usize {
        self.next
    }

    /// The speed.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    fn reanchor(&mut self, now: Duration) {
        self.anchor_offset = self.position(now);
        self.anchor_clock = now;
    }

    fn finish_if_done(&mut self) {
        if self.next >= self.offsets.len() {
            self.state = PlayState::Finished;
        }
    }
}

/// A replay's state, as the API answers it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ReplayStatus {
    /// The replay's id.
    pub id: String,
    /// Where it stands.
    pub state: PlayState,
    /// Its speed (2 plays twice as fast as it happened).
    pub speed: f64,
    /// Events sent so far.
    pub sent: usize,
    /// Events in the recording.
    pub total: usize,
    /// The runs the recording covers.
    pub run_ids: Vec<String>,
    /// Who started it.
    pub started_by: String,
}

/// What a follower of a replay receives.
#[derive(Debug, Clone)]
pub enum ReplayMessage {
    /// An event played again.
    Frame(Arc<ReplayFrame>),
    /// The replay's state changed (paused, resumed, speed, ended).
    Status(ReplayStatus),
}

/// One replay: its events, timing and followers.
pub struct Session {
    id: String,
    events: Vec<EventBody>,
    run_ids: Vec<String>,
    started_by: String,
    inner: Mutex<SessionInner>,
    wake: Notify,
    out: broadcast::Sender<ReplayMessage>,
    epoch: tokio::time::Instant,
    /// The clock reading of the last control (or the start).
    touched: Mutex<Duration>,
}

struct SessionInner {
    player: Player,
    sent: Vec<Arc<ReplayFrame>>,
}

/// A control a person sends a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplayAction {
    /// Hold it.
    Pause,
    /// Play on.
    Resume,
    /// Pause and send the next event.
    Step,
    /// End it.
    Stop,
}

impl Session {
    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SessionInner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The replay's state now.
    pub fn status(&self) -> ReplayStatus {
        let inner = self.lock();
        self.status_of(&inner.player)
    }

    /// Ended, or left alone for [`IDLE_AFTER`].
    fn forgettable(&self) -> bool {
        let touched = *self.touched.lock().unwrap_or_else(|p| p.into_inner());
        self.status().state.ended() || self.now().saturating_sub(touched) >= IDLE_AFTER
    }

    fn status_of(&self, player: &Player) -> ReplayStatus {
        ReplayStatus {
            id: self.id.clone(),
            state: player.state(),
            speed: player.speed(),
            sent: player.sent(),
            total: self.events.len(),
            run_ids: self.run_ids.clone(),
            started_by: self.started_by.clone(),
        }
    }

    /// The frames sent so far and a receiver for what follows, with nothing
    /// missed or repeated between them.
    pub fn follow(&self) -> (Vec<Arc<ReplayFrame>>, ReplayStatus, broadcast::Receiver<ReplayMessage>) {
        let inner = self.lock();
        (inner.sent.clone(), self.status_of(&inner.player), self.out.subscribe())
    }

    /// Applies a person's control (and a new speed, if given) and wakes the driver.
    pub fn control(&self, action: Option<ReplayAction>, speed: Option<f64>) -> ReplayStatus {
        let now = self.now();
        *self.touched.lock().unwrap_or_else(|p| p.into_inner()) = now;
        let mut inner = self.lock();
        if let Some(speed) = speed {
            inner.player.set_speed(speed, now);
        }
        let stepped = match action {
            Some(ReplayAction::Pause) => {
                inner.player.pause(now);
                None
            }
            Some(ReplayAction::Resume) => {
                inner.player.resume(now);
                None
            }
            Some(ReplayAction::Step) => inner.player.step(now),
            Some(ReplayAction::Stop) => {
                inner.player.stop();
                None
            }
            None => None,
        };
        if let Some(index) = stepped {
            self.send(&mut inner, index);
        }
        let status = self.status_of(&inner.player);
        drop(inner);
        let _ = self.out.send(ReplayMessage::Status(status.clone()));
        self.wake.notify_one();
        status
    }

    fn send(&self, inner: &mut SessionInner, index: usize) {
        let Some(event) = self.events.get(index) else { return };
        let first = self.events.first().map(|e| e.at).unwrap_or(event.at);
        let frame = Arc::new(ReplayFrame {
            replay: true,
            replay_id: self.id.clone(),
            index,
            total: self.events.len(),
            offset_ms: (event.at - first).num_milliseconds().max(0) as u64,
            event: event.clone(),
        });
        inner.sent.push(Arc::clone(&frame));
        let _ = self.out.send(ReplayMessage::Frame(frame));
    }

    /// Sends events as they fall due until the replay ends.
    async fn drive(self: Arc<Self>) {
        loop {
            let wait = {
                let now = self.now();
                let mut inner = self.lock();
                let was = inner.player.state();
                for index in inner.player.due(now) {
                    self.send(&mut inner, index);
                }
                if inner.player.state().ended() {
                    if !was.ended() {
                        let _ = self.out.send(ReplayMessage::Status(self.status_of(&inner.player)));
                    }
                    return;
                }
                inner.player.next_due_in(now)
            };
            match wait {
                Some(wait) => {
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = self.wake.notified() => {}
                    }
                }
                None => self.wake.notified().await,
            }
        }
    }
}

/// What a new replay is made of.
pub struct NewReplay {
    /// The events, in order.
    pub events: Vec<EventBody>,
    /// The runs they cover.
    pub run_ids: Vec<String>,
    /// Its speed.
    pub speed: f64,
    /// Start held (followers subscribe first, then resume or step).
    pub paused: bool,
    /// Who starts it.
    pub started_by: String,
}

/// The replays this server holds.
#[derive(Default)]
pub struct Replays {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

impl Replays {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts a replay on its own task; `None` when [`MAX_REPLAYS`] are playing.
    pub fn start(&self, new: NewReplay) -> Option<Arc<Session>> {
        let mut sessions = self.lock();
        if sessions.len() >= MAX_REPLAYS {
            let gone: Vec<String> =
                sessions.iter().filter(|(_, s)| s.forgettable()).map(|(id, _)| id.clone()).collect();
            for id in gone {
                if let Some(session) = sessions.remove(&id) {
                    session.control(Some(ReplayAction::Stop), None);
                }
            }
        }
        if sessions.len() >= MAX_REPLAYS {
            return None;
        }
        let times: Vec<_> = new.events.iter().map(|e| e.at).collect();
        let epoch = tokio::time::Instant::now();
        let player = Player::new(&times, new.speed, Duration::ZERO, new.paused);
        let session = Arc::new(Session {
            id: uuid::Uuid::now_v7().to_string(),
            events: new.events,
            run_ids: new.run_ids,
            started_by: new.started_by,
            inner: Mutex::new(SessionInner { player, sent: Vec::new() }),
            wake: Notify::new(),
            out: broadcast::channel(1024).0,
            epoch,
            touched: Mutex::new(Duration::ZERO),
        });
        sessions.insert(session.id.clone(), Arc::clone(&session));
        tokio::spawn(Arc::clone(&session).drive());
        Some(session)
    }

    /// A replay by id.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().get(id).cloned()
    }

    /// Every replay held, newest first.
    pub fn list(&self) -> Vec<ReplayStatus> {
        let mut all: Vec<ReplayStatus> = self.lock().values().map(|s| s.status()).collect();
        all.sort_by(|a, b| b.id.cmp(&a.id));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn times(secs: &[i64]) -> Vec<DateTime<Utc>> {
        let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        secs.iter().map(|s| start + chrono::Duration::seconds(*s)).collect()
    }

    fn s(secs: f64) -> Duration {
        Duration::from_secs_f64(secs)
    }

    #[test]
    fn events_fall_due_in_order_with_their_gaps_divided_by_the_speed() {
        let mut p = Player::new(&times(&[0, 10, 30]), 2.0, s(0.0), false);
        assert_eq!(p.due(s(0.0)), [0], "the first event at once");
        assert_eq!(p.next_due_in(s(0.0)), Some(s(5.0)), "ten seconds at twice the speed");
        assert!(p.due(s(4.9)).is_empty());
        assert_eq!(p.due(s(5.0)), [1]);
        assert_eq!(p.next_due_in(s(5.0)), Some(s(10.0)));
        assert_eq!(p.due(s(15.0)), [2]);
        assert_eq!(p.state(), PlayState::Finished);
    }

    #[test]
    fn a_late_clock_sends_every_event_due_in_their_order() {
        let mut p = Player::new(&times(&[0, 1, 2, 60]), 1.0, s(0.0), false);
        assert_eq!(p.due(s(3.0)), [0, 1, 2]);
        assert_eq!(p.next_due_in(s(3.0)), Some(s(57.0)));
    }

    #[test]
    fn a_paused_replay_holds_its_place_and_resumes_from_it() {
        let mut p = Player::new(&times(&[0, 10, 20]), 1.0, s(0.0), false);
        assert_eq!(p.due(s(0.0)), [0]);
        p.pause(s(4.0));
        assert!(p.due(s(100.0)).is_empty(), "nothing while paused, however long");
        assert_eq!(p.next_due_in(s(100.0)), None);
        p.resume(s(100.0));
        assert_eq!(p.next_due_in(s(100.0)), Some(s(6.0)), "ten seconds in, four already played");
        assert_eq!(p.due(s(106.0)), [1]);
    }

    #[test]
    fn step_sends_the_next_event_and_stays_paused_at_it() {
        let mut p = Player::new(&times(&[0, 10, 20]), 1.0, s(0.0), true);
        assert!(p.due(s(50.0)).is_empty(), "started paused");
        assert_eq!(p.step(s(50.0)), Some(0));
        assert_eq!(p.step(s(50.0)), Some(1));
        assert_eq!(p.state(), PlayState::Paused);
        p.resume(s(60.0));
        assert_eq!(p.next_due_in(s(60.0)), Some(s(10.0)), "from the stepped event's place");
        assert_eq!(p.step(s(61.0)), Some(2));
        assert_eq!((p.state(), p.step(s(62.0))), (PlayState::Finished, None));
    }

    #[test]
    fn a_new_speed_applies_from_now_on() {
        let mut p = Player::new(&times(&[0, 100]), 1.0, s(0.0), false);
        p.due(s(0.0));
        p.set_speed(10.0, s(50.0));
        assert_eq!(p.next_due_in(s(50.0)), Some(s(5.0)), "fifty seconds left at ten times");
        p.stop();
        assert!(p.due(s(1000.0)).is_empty());
        assert_eq!(p.state(), PlayState::Stopped);
    }
}
