import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The driver's waiting strategy, kept in this one file: one dedicated thread drives all
/// of a pool's connections with libpq in non-blocking mode, waiting on their sockets
/// with poll(2), the way pgbench does. Tasks hand requests over and suspend until the
/// thread resumes them. No libpq call runs on an event loop or on Swift's cooperative
/// pool, and no thread ever blocks inside libpq.
///
/// The loop is also a `TaskExecutor`: a task that prefers it (`withTaskExecutorPreference`)
/// runs on this thread between I/O, so its requests and their replies cost no thread
/// switch at all. That suits database-bound batch work; request handlers stay on the
/// cooperative pool.
final class PostgresEventLoop: TaskExecutor, Sendable {
    private struct Submission: Sendable {
        let connection: PostgresConnection
        let request: PostgresConnection.Request
        let continuation: CheckedContinuation<PostgresRows, any Error>
    }

    private struct Inbox {
        var submissions: [Submission] = []
        /// Jobs of tasks that prefer this loop as their executor.
        var jobs: [UnownedJob] = []
        /// The loop thread is in (or about to enter) poll and needs a wake-up byte.
        var isPolling = false
        var wakePending = false
        var isStopping = false
        var hasExited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []

        var isEmpty: Bool { submissions.isEmpty && jobs.isEmpty }

        /// Whether the caller must write the wake-up byte: only when the loop is waiting
        /// in poll and nobody has written one yet.
        mutating func claimWakeUp() -> Bool {
            guard isPolling, !wakePending else { return false }
            wakePending = true
            return true
        }
    }

    private let inbox = Mutex(Inbox())
    /// A pipe whose read end is in every poll, so a submission can wake the thread.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init(name: String = "postgres-io") {
        var descriptors: [Int32] = [0, 0]
        precondition(pipe(&descriptors) == 0, "cannot create the event loop's wake-up pipe")
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = descriptors[0]
        wakeWrite = descriptors[1]
        let thread = Thread { [self] in runLoop() }
        thread.name = name
        thread.start()
    }

    /// Runs `request` on `connection` and returns its rows.
    func perform(_ request: PostgresConnection.Request, on connection: PostgresConnection) async throws -> PostgresRows {
        try await withCheckedThrowingContinuation { continuation in
            let wake: Bool? = inbox.withLock { inbox in
                if inbox.isStopping { return nil }
                inbox.submissions.append(Submission(connection: connection, request: request, continuation: continuation))
                return inbox.claimWakeUp()
            }
            switch wake {
            case nil: continuation.resume(throwing: PostgresError(kind: .poolClosed, message: "the connection pool has been shut down"))
            case true?: wakeUp()
            case false?: break
            }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wake: Bool? = inbox.withLock { inbox in
            if inbox.hasExited { return nil }
            inbox.jobs.append(job)
            return inbox.claimWakeUp()
        }
        switch wake {
        case nil: globalConcurrentExecutor.enqueue(ExecutorJob(job))  // the thread has ended
        case true?: wakeUp()
        case false?: break
        }
    }

    /// Refuses new requests, lets those in flight finish, and ends the thread.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let exited = inbox.withLock { inbox in
                inbox.isStopping = true
                if !inbox.hasExited { inbox.exitWaiters.append(continuation) }
                return inbox.hasExited
            }
            if exited { continuation.resume() } else { wakeUp() }
        }
    }

    private func wakeUp() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    // MARK: The loop thread

    private struct Active {
        let connection: PostgresConnection
        let continuation: CheckedContinuation<PostgresRows, any Error>
        var events: Int16
    }

    private func runLoop() {
        var active: [Active] = []
        var descriptors: [pollfd] = []
        var jobs: [UnownedJob] = []
        var submissions: [Submission] = []
        var drain = [UInt8](repeating: 0, count: 64)

        /// Applies a connection's progress to the entry at `index` (a new entry when nil).
        func settle(_ progress: PostgresConnection.Progress, at index: Int?, _ submission: Submission? = nil) {
            switch progress {
            case .done(let result):
                let continuation = index.map { active.remove(at: $0).continuation } ?? submission!.continuation
                continuation.resume(with: result.mapError { $0 as any Error })
            case .waitForRead, .waitForWrite, .waitForReadOrWrite:
                let events = Self.events(for: progress)
                if let index {
                    active[index].events = events
                } else {
                    active.append(Active(connection: submission!.connection, continuation: submission!.continuation, events: events))
                }
            }
        }

        while true {
            let stopping = inbox.withLock { inbox in
                swap(&jobs, &inbox.jobs)
                swap(&submissions, &inbox.submissions)
                return inbox.isStopping
            }
            for job in jobs {
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
            jobs.removeAll(keepingCapacity: true)
            for submission in submissions {
                settle(submission.connection.start(submission.request), at: nil, submission)
            }
            submissions.removeAll(keepingCapacity: true)
            if stopping && active.isEmpty && inbox.withLock({ $0.isEmpty }) { break }

            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            var deadline: ContinuousClock.Instant?
            for entry in active {
                descriptors.append(pollfd(fd: entry.connection.socket, events: entry.events, revents: 0))
                if let entryDeadline = entry.connection.deadline {
                    deadline = min(deadline ?? entryDeadline, entryDeadline)
                }
            }

            // While requests are in flight, replies and new requests come quickly: check for
            // them a few times, yielding the CPU to the database in between, before paying
            // for a blocking wait and the wake-up syscalls it costs submitters.
            var ready: Int32 = 0
            if !active.isEmpty {
                for _ in 0..<Self.spinLimit {
                    ready = poll(&descriptors, nfds_t(descriptors.count), 0)
                    if ready != 0 || inbox.withLock({ !$0.isEmpty }) { break }
                    sched_yield()
                }
            }
            if ready == 0 {
                // Announce the wait, unless something arrived since the inbox was emptied.
                let mustPoll = inbox.withLock { inbox in
                    guard inbox.isEmpty, !(inbox.isStopping && active.isEmpty) else { return false }
                    inbox.isPolling = true
                    return true
                }
                guard mustPoll else { continue }
                let timeout = deadline.map { Int32(clamping: max(0, Self.milliseconds($0 - .now)) + 1) } ?? -1
                ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
                inbox.withLock { $0.isPolling = false }
            }
            if ready > 0, descriptors[0].revents != 0 {
                while read(wakeRead, &drain, drain.count) > 0 {}
                inbox.withLock { $0.wakePending = false }
            }
            // Descending, so that removing a finished entry never shifts one not yet visited.
            for index in active.indices.reversed() where descriptors[index + 1].revents != 0 {
                settle(active[index].connection.resume(), at: index)
            }
            if deadline != nil {
                let now = ContinuousClock.now
                for index in active.indices.reversed() where active[index].connection.deadline.map({ $0 <= now }) == true {
                    settle(active[index].connection.timeOut(), at: index)
                }
            }
        }

        close(wakeRead)
        close(wakeWrite)
        let (waiters, strandedJobs) = inbox.withLock { inbox in
            inbox.hasExited = true
            defer {
                inbox.exitWaiters = []
                inbox.jobs = []
            }
            return (inbox.exitWaiters, inbox.jobs)
        }
        // Tasks that still prefer this executor continue on the global one.
        strandedJobs.forEach { globalConcurrentExecutor.enqueue(ExecutorJob($0)) }
        waiters.forEach { $0.resume() }
    }

    private static func events(for progress: PostgresConnection.Progress) -> Int16 {
        switch progress {
        case .waitForRead: Int16(POLLIN)
        case .waitForWrite: Int16(POLLOUT)
        case .waitForReadOrWrite: Int16(POLLOUT | POLLIN)
        case .done: 0
        }
    }

    /// Non-blocking checks before a blocking wait while requests are in flight.
    private static let spinLimit = 8

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
