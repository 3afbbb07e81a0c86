//! Running clients: [`timed`] runs N client threads for a warm-up and a measured
//! period, each recording the latency of every event in its own HDR histogram (merged
//! at the end, so threads never share a counter on the hot path); [`fixed_work`] has N
//! users each run one job and reports the wall time until the last one finishes (the
//! seed-003 and seed-001 style "seconds to complete"). Both show progress on stderr.

use crate::client::{Client, ClientError, Target};
use crate::report::Measure;
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::Thread;
use std::time::{Duration, Instant};

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

/// An event function: runs one event on a client, returns the statements it sent.
pub type EventFn<'a> = dyn Fn(&mut dyn Client, &mut StdRng) -> Result<u64, ClientError> + Sync + 'a;

/// Opens a client and selects `db`.
pub fn connect_db(target: &Target, db: &str) -> Result<Box<dyn Client>, String> {
    let mut c = target.connect()?;
    c.exec(&format!("USE {db}"))
        .map_err(|e| format!("USE {db}: {e}"))?;
    Ok(c)
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn bar(len: u64, template: &str, message: String) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(message);
    pb
}

/// Starts client threads together. Not a `Barrier`: a barrier (or a condvar) hands
/// its mutex from each woken thread to the next, and with hundreds of threads on two
/// busy cores every hand-off waits for the woken thread to be scheduled: at 256
/// clients the last ones left the barrier more than 20 s after the first (measured),
/// and the cell waited for them. Here each client parks on its own and is unparked
/// directly, so no client's start depends on another's.
struct StartGate {
    arrived: AtomicUsize,
    open: AtomicBool,
}

impl StartGate {
    fn new() -> StartGate {
        StartGate {
            arrived: AtomicUsize::new(0),
            open: AtomicBool::new(false),
        }
    }

    /// A client: waits until the gate opens.
    fn wait(&self) {
        self.arrived.fetch_add(1, Ordering::AcqRel);
        while !self.open.load(Ordering::Acquire) {
            std::thread::park();
        }
    }

    /// The coordinator: waits until all `clients` have arrived, then opens the gate and
    /// wakes each of them.
    fn open_when_all(&self, clients: &[Thread]) {
        while self.arrived.load(Ordering::Acquire) < clients.len() {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.open.store(true, Ordering::Release);
        for t in clients {
            t.unpark();
        }
    }
}

struct ThreadResult {
    hist: Histogram<u64>,
    events: u64,
    statements: u64,
    retried: u64,
    error: Option<String>,
}

/// Runs `threads` clients on `db`: a warm-up of at least `warmup`, extended until as many
/// events have completed as there are clients (the clients start together, so events
/// longer than the warm-up would otherwise all end together inside the measured period
/// instead of being spread over it as in a steady state), then a measured period of at
/// least `time`, extended until as many events have completed in it as there are
/// clients (so an event longer than the period is still measured: the period is then at
/// least about one event long). It does not wait for every client: with hundreds of
/// clients on two cores, a few can be starved for minutes by a lock that lets running
/// threads barge ahead of woken ones (glibc malloc's arena lock, measured at 1024
/// clients), and the cell would wait for them; such clients are counted instead
/// (`idle_clients`) and shown under the table. Events that complete in the period are
/// counted, and the rate is their number over the period's length, as sysbench does:
/// in a steady state completions per second are the throughput, whatever the event
/// length, and with many more clients than cores no client's bursts are mistaken for
/// its rate (a rate per client over its own busy span overstates a client that was
/// scheduled late).
///
/// A statement error other than deadlock, lock wait timeout or duplicate key stops
/// that client, and the first such error makes the whole cell an error: a statement
/// that fails once fails every time, and a rate over survivors would mislead.
#[allow(clippy::too_many_arguments)]
pub fn timed(
    target: &Target,
    db: &str,
    threads: usize,
    warmup: Duration,
    time: Duration,
    label: &str,
    seed: u64,
    event: &EventFn,
) -> Result<Measure, String> {
    let threads = threads.max(1);
    let mut clients = Vec::with_capacity(threads);
    for _ in 0..threads {
        // Three significant figures from 1 µs up; the histogram grows as needed.
        let hist = Histogram::<u64>::new(3).map_err(|e| format!("latency histogram: {e}"))?;
        clients.push((connect_db(target, db)?, hist));
    }
    let phase = AtomicU8::new(WARMUP);
    let done = AtomicU64::new(0);
    // Warm-up events completed or retried; then the same for measured events, and
    // clients stopped by an error.
    let warm = AtomicU64::new(0);
    let attempts = AtomicU64::new(0);
    let stopped = AtomicU64::new(0);
    let gate = StartGate::new();
    let results = Mutex::new(Vec::with_capacity(threads));
    let total = warmup + time;
    let pb = bar(
        total.as_millis() as u64,
        "{msg} [{bar:30}] {elapsed}",
        format!("{label}: {threads} thread(s)"),
    );
    let mut measure_start = Instant::now();
    let mut measure_end = measure_start;
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (i, (mut client, hist)) in clients.into_iter().enumerate() {
            let (phase, done, warm, attempts, stopped, gate, results) =
                (&phase, &done, &warm, &attempts, &stopped, &gate, &results);
            let h = scope.spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed.wrapping_add(i as u64 * 7919));
                let mut r = ThreadResult {
                    hist,
                    events: 0,
                    statements: 0,
                    retried: 0,
                    error: None,
                };
                gate.wait();
                loop {
                    if phase.load(Ordering::Acquire) == STOP {
                        break;
                    }
                    let start = Instant::now();
                    let outcome = event(client.as_mut(), &mut rng);
                    let end = Instant::now();
                    // Counted when it completes inside the measured period.
                    let measuring = phase.load(Ordering::Acquire) == MEASURE;
                    let counter = if measuring { attempts } else { warm };
                    match outcome {
                        Ok(n) => {
                            if measuring {
                                r.events += 1;
                                r.statements += n;
                                let micros = end.duration_since(start).as_micros().max(1);
                                let _ = r.hist.record(micros as u64);
                                done.fetch_add(1, Ordering::Relaxed);
                            }
                            counter.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) if e.is_retryable() || e.code == Some(1062) => {
                            r.retried += 1;
                            counter.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            r.error = Some(e.to_string());
                            stopped.fetch_add(1, Ordering::AcqRel);
                            break;
                        }
                    }
                }
                drop(client);
                if let Ok(mut v) = results.lock() {
                    v.push(r);
                }
            });
            handles.push(h.thread().clone());
        }
        gate.open_when_all(&handles);
        let start = Instant::now();
        let tick = |pb: &ProgressBar| {
            pb.set_position(start.elapsed().as_millis() as u64);
            pb.set_message(format!(
                "{label}: {threads} thread(s), {} events",
                done.load(Ordering::Relaxed)
            ));
        };
        // At least `min` from `from`, and until `counter` holds one event per client (or
        // every client has stopped on an error).
        let run_phase = |from: Instant, min: Duration, counter: &AtomicU64| {
            while from.elapsed() < min
                || counter.load(Ordering::Acquire) < threads as u64
                    && stopped.load(Ordering::Acquire) < threads as u64
            {
                tick(&pb);
                let left = min.saturating_sub(from.elapsed());
                std::thread::sleep(if left.is_zero() {
                    Duration::from_millis(1)
                } else {
                    Duration::from_millis(50).min(left)
                });
            }
        };
        run_phase(start, warmup, &warm);
        measure_start = Instant::now();
        phase.store(MEASURE, Ordering::Release);
        run_phase(measure_start, time, &attempts);
        measure_end = Instant::now();
        phase.store(STOP, Ordering::Release);
    });
    pb.finish_and_clear();
    let results = results
        .into_inner()
        .map_err(|_| format!("{label}: a client thread panicked"))?;
    if results.len() != threads {
        return Err(format!("{label}: a client thread panicked"));
    }
    let mut hist = Histogram::<u64>::new(3).map_err(|e| e.to_string())?;
    let (mut events, mut retried, mut statements) = (0, 0, 0);
    for r in &results {
        if let Some(e) = &r.error {
            return Err(e.clone());
        }
        hist.add(&r.hist)
            .map_err(|e| format!("merging latencies: {e}"))?;
        events += r.events;
        statements += r.statements;
        retried += r.retried;
    }
    let period = measure_end.duration_since(measure_start).as_secs_f64();
    let (rate, qps) = if period > 0.0 {
        (events as f64 / period, statements as f64 / period)
    } else {
        (0.0, 0.0)
    };
    if events == 0 {
        return Err(format!(
            "{label}: no event completed{}",
            if retried > 0 {
                format!(" ({retried} deadlocks/lock waits/duplicate keys retried)")
            } else {
                String::new()
            }
        ));
    }
    let ms = |q: f64| hist.value_at_quantile(q) as f64 / 1000.0;
    Ok(Measure {
        value: rate,
        p50_ms: Some(ms(0.50)),
        p95_ms: Some(ms(0.95)),
        p99_ms: Some(ms(0.99)),
        max_ms: Some(hist.max() as f64 / 1000.0),
        events,
        qps: Some(qps),
        retried,
        idle_clients: results.iter().filter(|r| r.events == 0).count() as u64,
    })
}

/// Each of `users` clients runs `job(user, client)` once, all starting together; the
/// result is the wall time until the last finishes, in seconds.
pub fn fixed_work(
    target: &Target,
    db: &str,
    users: usize,
    label: &str,
    job: &(dyn Fn(usize, &mut dyn Client) -> Result<(), ClientError> + Sync),
) -> Result<Measure, String> {
    let users = users.max(1);
    let mut clients = Vec::with_capacity(users);
    for _ in 0..users {
        clients.push(connect_db(target, db)?);
    }
    let gate = StartGate::new();
    let errors = Mutex::new(Vec::new());
    // Each user's (start, end): the result runs from the first start to the last end,
    // with no polling slack in it.
    let spans = Mutex::new(Vec::with_capacity(users));
    let pb = bar(
        users as u64,
        "{msg} [{bar:30}] {pos}/{len} users done, {elapsed}",
        format!("{label}: {users} user(s)"),
    );
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(users);
        for (i, mut client) in clients.into_iter().enumerate() {
            let (gate, errors, spans, pb) = (&gate, &errors, &spans, &pb);
            let h = scope.spawn(move || {
                gate.wait();
                let start = Instant::now();
                let result = job(i, client.as_mut());
                let end = Instant::now();
                if let Err(e) = result {
                    if let Ok(mut v) = errors.lock() {
                        v.push(format!("user {}: {e}", i + 1));
                    }
                }
                if let Ok(mut v) = spans.lock() {
                    v.push((start, end));
                }
                pb.inc(1);
                drop(client);
            });
            handles.push(h.thread().clone());
        }
        gate.open_when_all(&handles);
    });
    pb.finish_and_clear();
    let errors = errors
        .into_inner()
        .map_err(|_| format!("{label}: a client thread panicked"))?;
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    let spans = spans
        .into_inner()
        .map_err(|_| format!("{label}: a client thread panicked"))?;
    let first = spans.iter().map(|s| s.0).min();
    let last = spans.iter().map(|s| s.1).max();
    match (first, last) {
        (Some(a), Some(b)) if spans.len() == users => Ok(Measure::seconds(
            b.duration_since(a).as_secs_f64(),
            users as u64,
        )),
        _ => Err(format!("{label}: a client thread panicked")),
    }
}

/// Runs `job` once unmeasured (to warm caches, as the seeds discarded their first
/// sample), then again and again until `time` has passed and it ran at least
/// `min_runs` times. The result is the mean seconds per run, with percentiles.
pub fn repeat(
    c: &mut dyn Client,
    time: Duration,
    min_runs: u64,
    label: &str,
    job: &mut dyn FnMut(&mut dyn Client) -> Result<(), String>,
) -> Result<Measure, String> {
    job(c).map_err(|e| format!("{label}: {e}"))?;
    let mut hist = Histogram::<u64>::new(3).map_err(|e| format!("latency histogram: {e}"))?;
    let pb = bar(
        time.as_millis() as u64,
        "{msg} [{bar:30}] {elapsed}",
        label.to_string(),
    );
    let start = Instant::now();
    let mut runs = 0u64;
    while runs < min_runs.max(1) || start.elapsed() < time {
        let t = Instant::now();
        job(c).map_err(|e| format!("{label}: {e}"))?;
        let _ = hist.record(t.elapsed().as_micros().max(1) as u64);
        runs += 1;
        pb.set_position(start.elapsed().as_millis() as u64);
        pb.set_message(format!("{label}: {runs} run(s)"));
    }
    let total = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let ms = |q: f64| hist.value_at_quantile(q) as f64 / 1000.0;
    Ok(Measure {
        value: total / runs as f64,
        p50_ms: Some(ms(0.50)),
        p95_ms: Some(ms(0.95)),
        p99_ms: Some(ms(0.99)),
        max_ms: Some(hist.max() as f64 / 1000.0),
        events: runs,
        qps: None,
        retried: 0,
        idle_clients: 0,
    })
}
