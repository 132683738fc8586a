//! Whether other work ran on the machine while `bench` or `bench-suite` timed: the CPU time the
//! whole machine spent busy (Linux `/proc/stat`) less what this process and its children spent
//! (`/proc/self/stat`: the search, the compiler, the benchmark program), over the wall-clock time
//! between two readings. Timings taken beside another busy process (a build, a second benchmark)
//! are slower and noisier than the machine's, even side by side: the shared caches and memory
//! bandwidth, and on a VM the host.

use std::time::Instant;

/// Clock ticks per second of the `/proc` counters (`USER_HZ`: 100 on every Linux architecture
/// that exports it to user space unchanged).
const TICKS_PER_SECOND: f64 = 100.0;

/// Other work above this many CPUs on average is reported.
const BUSY_CPUS: f64 = 0.25;

/// One reading of the counters.
#[derive(Clone, Copy, Debug)]
pub struct CpuTimes {
    /// Ticks any CPU of the machine spent busy (user, nice, system, irq, softirq, steal).
    machine: u64,
    /// Ticks this process and its waited-for children spent.
    own: u64,
    at: Instant,
}

impl CpuTimes {
    /// The counters now; `None` where `/proc` does not give them (not Linux).
    pub fn now() -> Option<CpuTimes> {
        let machine = machine_busy(&std::fs::read_to_string("/proc/stat").ok()?)?;
        let own = own_ticks(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
        Some(CpuTimes { machine, own, at: Instant::now() })
    }

    /// How many CPUs other work kept busy on average since `earlier`.
    fn others_since(&self, earlier: &CpuTimes) -> Option<f64> {
        let seconds = self.at.duration_since(earlier.at).as_secs_f64();
        others(earlier.machine, earlier.own, self.machine, self.own, seconds)
    }
}

/// The average count of CPUs others kept busy, from two readings `seconds` apart; `None` for a
/// span too short to tell (under a second).
fn others(
    machine_before: u64,
    own_before: u64,
    machine_after: u64,
    own_after: u64,
    seconds: f64,
) -> Option<f64> {
    if seconds < 1.0 {
        return None;
    }
    let machine = machine_after.saturating_sub(machine_before);
    let own = own_after.saturating_sub(own_before);
    Some(machine.saturating_sub(own) as f64 / TICKS_PER_SECOND / seconds)
}

/// The busy ticks of the machine: `/proc/stat`'s first line, `cpu user nice system idle iowait irq
/// softirq steal ...` (guest time is already counted in user and nice).
fn machine_busy(stat: &str) -> Option<u64> {
    let line = stat.lines().next()?;
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let values: Vec<u64> = fields.map(str::parse).collect::<Result<_, _>>().ok()?;
    let at = |i: usize| values.get(i).copied().unwrap_or(0);
    Some(at(0) + at(1) + at(2) + at(5) + at(6) + at(7))
}

/// This process's ticks with its waited-for children's: fields 14-17 of `/proc/self/stat`
/// (`utime stime cutime cstime`), counted after the command name, which may hold spaces.
fn own_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Field 3 (the state) is the first after the name; utime is field 14.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    (11..15).map(|i| fields.get(i)?.parse::<u64>().ok()).sum()
}

/// [`busy_note`] for the time from the reading `before` (taken as measuring began) until now.
pub fn busy_since(before: Option<CpuTimes>) -> Option<String> {
    busy_note(before.zip(CpuTimes::now()).and_then(|(before, after)| after.others_since(&before)))
}

/// A warning when others kept more than a quarter of a CPU busy while `bench` or `bench-suite`
/// measured.
fn busy_note(others: Option<f64>) -> Option<String> {
    let others = others.filter(|o| *o > BUSY_CPUS)?;
    Some(format!(
        "other work kept {others:.1} CPUs busy on average while this ran (the machine's busy time less this \
         process's and its children's): the figures are slower and noisier than the machine's; time again on a \
         quiet machine"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counters_parse_as_linux_prints_them() {
        let stat = "cpu  100 5 50 9000 7 3 2 10 40 0\ncpu0 50 2 25 4500 3 1 1 5 20 0\n";
        assert_eq!(machine_busy(stat), Some(100 + 5 + 50 + 3 + 2 + 10));
        assert_eq!(machine_busy("intr 1 2 3\n"), None);
        assert_eq!(machine_busy("cpu  1 x 3\n"), None);
        // A command name with spaces and parentheses; utime 11, stime 12, cutime 13, cstime 14.
        let own = "4242 (mo (rel) lo) S 1 4242 4242 0 -1 4194304 100 0 0 0 11 12 13 14 20 0 3 0 1 2 3";
        assert_eq!(own_ticks(own), Some(11 + 12 + 13 + 14));
        assert_eq!(own_ticks("4242 (morello) S 1"), None);
    }

    #[test]
    fn others_are_the_machine_less_this_process_and_its_children() {
        // 10 s: the machine busy 1,500 ticks, this process and its children 1,000: half a CPU.
        assert_eq!(others(0, 0, 1500, 1000, 10.0), Some(0.5));
        assert_eq!(others(0, 0, 1000, 1000, 10.0), Some(0.0));
        assert_eq!(others(0, 0, 1000, 1000, 0.5), None);
        assert!(busy_note(Some(0.5)).unwrap().starts_with("other work kept 0.5 CPUs busy"));
        assert_eq!(busy_note(Some(0.2)), None);
        assert_eq!(busy_note(None), None);
    }
}
