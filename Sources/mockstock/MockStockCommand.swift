import ArgumentParser
import Foundation
import Logging
import Metrics
import MockStock
import Postgres
import Prometheus

@main
struct MockStockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mockstock",
        abstract: "The MockStock game server.",
        discussion: "Configuration comes from the environment; see docs/configuration.md.",
        subcommands: [Serve.self, Migrate.self, Seed.self, Admin.self],
        defaultSubcommand: Serve.self
    )
}

/// Reads the environment and sets up logging, shared by every command.
func loadConfiguration() throws -> (AppConfiguration, Logger) {
    let configuration: AppConfiguration
    do {
        configuration = try AppConfiguration(environment: ProcessInfo.processInfo.environment)
    } catch let error as ConfigurationError {
        throw ValidationError(error.description)
    }
    let level = configuration.logLevel
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    return (configuration, Logger(label: "mockstock"))
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending migrations, then serve HTTP until SIGTERM or SIGINT."
    )

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        let metrics = AppMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        let app = try await buildApplication(configuration: configuration, logger: logger, metrics: metrics)
        try await app.runService()
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and exit.")

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        try await withDatabase(configuration, logger) { _ in }
    }
}

/// Migrates, runs `body` with a small pool and closes it; errors the input caused
/// become usage errors with their plain message. The pool is a direct session on the
/// primary (`DATABASE_DIRECT_URL`) when there is one: the migrations' lock needs a session.
func withDatabase(
    _ configuration: AppConfiguration, _ logger: Logger, _ body: (PostgresConnectionPool) async throws -> Void
) async throws {
    let pool = PostgresConnectionPool(
        configuration: configuration.postgresDirect() ?? configuration.postgres(maxConnections: 2), logger: logger
    )
    do {
        try await migrate(pool: pool, configuration: configuration, logger: logger)
        try await body(pool)
    } catch let error as InvalidInput {
        await pool.close()
        throw ValidationError(error.detail)
    } catch {
        await pool.close()
        throw error
    }
    await pool.close()
}

struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load instruments and daily prices from CSV files (.gz accepted). Loading the same files again changes nothing."
    )

    @Option(name: .customLong("instruments"), help: "CSV with symbol,name[,sector,description,currency] (or the S&P constituents list). Repeatable.")
    var instrumentFiles: [String] = []

    @Option(name: .customLong("prices"), help: "CSV with symbol,date,open,high,low,close,volume[,dividend,split]. Repeatable.")
    var priceFiles: [String] = []

    @Option(name: .customLong("fx"), help: "The ECB's daily exchange rates: Date,USD,JPY,... (units per euro, N/A where none).")
    var fxFiles: [String] = []

    @Flag(help: "Do nothing when the database already has instruments (for a first start); rates only when it has none.")
    var ifEmpty = false

    @Flag(help: "Move each prices file's trading days, in order, onto the NYSE trading days that end yesterday (or on the last one before today): real prices on recent dates.")
    var recent = false

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        try await withDatabase(configuration, logger) { pool in
            let seeder = MarketSeeder(pool: pool)
            var fxWanted = !ifEmpty
            if !fxWanted { fxWanted = try await seeder.hasNoFX() }
            for file in fxFiles where fxWanted {
                let count = try await seeder.seedFX(try FileChunks(path: file))
                print("\(file): \(count) exchange rates")
            }
            if ifEmpty, try await !seeder.isEmpty() {
                print("The market already has instruments; nothing more seeded.")
                return
            }
            for file in instrumentFiles {
                let count = try await seeder.seedInstruments(csv: String(contentsOfFile: file, encoding: .utf8))
                print("\(file): \(count) instruments")
            }
            let today = MarketHours(schedule: .nyse).day(of: configuration.clock())
            for file in priceFiles {
                let started = ContinuousClock.now
                let count = try await seeder.seedPrices(try FileChunks(path: file), endingBefore: recent ? today : nil)
                print("\(file): \(count) daily bars in \(ContinuousClock.now - started)\(recent ? ", moved to end before \(today)" : "")")
            }
        }
    }
}

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage admin accounts.",
        subcommands: [Create.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an admin, or make an existing player an admin.",
            discussion: """
                Asks for the username and password on a terminal; otherwise reads the password from \
                standard input. An existing player keeps their password unless --set-password is \
                given (on a terminal it asks). `make admin` runs this on the database `make run` uses.
                """
        )

        @Option(help: "The admin's username (3–32 of A–Z a–z 0–9 _ . -); asked for on a terminal.")
        var username: String?

        @Flag(help: "Also give an existing player the password read (without it their password stays).")
        var setPassword = false

        func run() async throws {
            guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else {
                throw ValidationError(
                    "DATABASE_URL is not set. For the database `make run` uses, run `make admin`; otherwise set DATABASE_URL to the server's database."
                )
            }
            let (configuration, logger) = try loadConfiguration()
            let terminal = isatty(STDIN_FILENO) == 1
            guard let username = username ?? (terminal ? Terminal.ask("Username: ") : nil), !username.isEmpty else {
                throw ValidationError("Give the username with --username NAME.")
            }
            do {
                try Credentials.validateUsername(username)
            } catch let error as InvalidInput {
                throw ValidationError(error.detail)
            }
            var outcome = AccountService.AdminOutcome.promoted
            try await withDatabase(configuration, logger) { pool in
                let accounts = await makeAccountService(configuration: configuration, pool: pool, logger: logger)
                let exists = try await accounts.userExists(username: username)
                var setPassword = self.setPassword
                if exists && !setPassword && terminal {
                    setPassword = Terminal.ask("\(username) is already a player. Change their password too? [y/N] ")?
                        .lowercased().hasPrefix("y") ?? false
                }
                let password = !exists || setPassword ? try Self.readPassword(for: username, terminal: terminal) : nil
                outcome = try await accounts.ensureAdmin(username: username, password: password, logger: logger)
            }
            switch outcome {
            case .created: print("\(username) is a new admin. Log in at the server's address.")
            case .promoted: print("\(username) is an admin; their password is unchanged.")
            case .promotedWithNewPassword: print("\(username) is an admin with the new password.")
            }
        }

        static func readPassword(for username: String, terminal: Bool) throws -> String {
            let password = terminal ? Terminal.askHidden("Password for \(username): ") : readLine(strippingNewline: true)
            guard let password, !password.isEmpty else {
                throw ValidationError("Give the password on standard input, e.g. `printf %s \"$PASSWORD\" | mockstock admin create --username \(username)`")
            }
            do {
                try Credentials.validatePassword(password)
            } catch let error as InvalidInput {
                throw ValidationError(error.detail)
            }
            return password
        }
    }
}

/// Questions on the terminal (standard error, so standard output stays the result).
enum Terminal {
    static func ask(_ question: String) -> String? {
        FileHandle.standardError.write(Data(question.utf8))
        return readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces)
    }

    /// Reads a line as typed (a password may begin or end with a space).
    private static func line(_ question: String) -> String? {
        FileHandle.standardError.write(Data(question.utf8))
        return readLine(strippingNewline: true)
    }

    /// Reads a line without echoing it.
    static func askHidden(_ question: String) -> String? {
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else { return line(question) }
        var quiet = settings
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return line(question)
    }
}
