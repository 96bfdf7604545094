/// Where Linux hardware is looked for; `nil` roots mean `COREMOTION_SYSFS_ROOT` / `COREMOTION_DEV_ROOT`
/// when set, else `/sys` and `/dev`. Sources that touch no file system ignore it.
package struct SourceRoots: Sendable, Equatable {
    /// The sysfs root, or `nil` for the environment's or `/sys`.
    package var sysfsRoot: String?
    /// The device root, or `nil` for the environment's or `/dev`.
    package var devRoot: String?

    /// The roots; both `nil` (the environment's) by default.
    package init(sysfsRoot: String? = nil, devRoot: String? = nil) {
        self.sysfsRoot = sysfsRoot
        self.devRoot = devRoot
    }
}

/// The specification schemes of each source family, defined once here (the lowest layer, always
/// linked) so that OpenCoreMotion can name a family whose module a package trait left out, and the
/// module that implements it registers the same names.
package enum SourceSchemes {
    /// The simulator: `sim`, `sim:SCENARIO[:SEED]`.
    package static let simulator = ["sim"]
    /// Recordings: `replay:PATH`.
    package static let replay = ["replay"]
    /// Linux hardware (trait `LinuxHardware`): `iio`, `evdev`, `i2c`.
    package static let linuxHardware = ["iio", "evdev", "i2c"]
    /// MQTT brokers (trait `NetworkSources`).
    package static let mqtt = ["mqtt", "mqtts", "mqtt+ws", "mqtt+wss"]
    /// Phone apps over the network (trait `NetworkSources`).
    package static let phones = ["sensorlogger", "sensorserver", "phyphox", "sensorlog", "hyperimu"]

    /// The scheme of a specification: the text before its first `:` (all of it when there is none),
    /// lower-cased.
    package static func scheme(of spec: String) -> String {
        (spec.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? spec).lowercased()
    }
}

/// A family of sources named by specification schemes (`sim`, `replay`, `iio`, `mqtt`, …), as the module
/// that implements it registers it in a ``SourceCatalog``.
///
/// Every closure may be called from any thread.
package struct SourceProvider: Sendable {
    /// The schemes the family answers to (lower case): see ``SourceSchemes``.
    package let schemes: [String]
    /// The forms of its specifications, for error messages: `sim[:SCENARIO[:SEED]]`.
    package let usage: String
    /// Opens the source a specification names (its scheme is one of ``schemes``).
    package let makeSource: @Sendable (_ spec: String, _ roots: SourceRoots) throws(SourceError) -> any SensorSource
    /// The barometer a specification names, or `nil` (the family has none, or this one cannot be opened).
    package let makeBarometer: @Sendable (_ spec: String, _ roots: SourceRoots) -> (any BarometerSource)?
    /// The first device of the family found without being named (hardware), or `nil`.
    package let firstSource: @Sendable (_ roots: SourceRoots) -> (any SensorSource)?
    /// The first barometer of the family found without being named (hardware), or `nil`.
    package let firstBarometer: @Sendable (_ roots: SourceRoots) -> (any BarometerSource)?

    /// A provider; the discovery closures default to finding nothing, the barometer to none.
    package init(
        schemes: [String],
        usage: String,
        makeSource: @escaping @Sendable (_ spec: String, _ roots: SourceRoots) throws(SourceError) -> any SensorSource,
        makeBarometer: @escaping @Sendable (_ spec: String, _ roots: SourceRoots) -> (any BarometerSource)? = { _, _ in nil },
        firstSource: @escaping @Sendable (_ roots: SourceRoots) -> (any SensorSource)? = { _ in nil },
        firstBarometer: @escaping @Sendable (_ roots: SourceRoots) -> (any BarometerSource)? = { _ in nil }
    ) {
        self.schemes = schemes.map { $0.lowercased() }
        self.usage = usage
        self.makeSource = makeSource
        self.makeBarometer = makeBarometer
        self.firstSource = firstSource
        self.firstBarometer = firstBarometer
    }
}

/// A family left out of this build by a package trait: its schemes give an error naming the trait.
package struct MissingSourceFamily: Sendable {
    /// The schemes it would answer to.
    package let schemes: [String]
    /// The package trait that links it (`NetworkSources`).
    package let trait: String
    /// What it is, for the message: "MQTT brokers and phone apps".
    package let what: String

    /// A family left out by `trait`.
    package init(schemes: [String], trait: String, what: String) {
        self.schemes = schemes.map { $0.lowercased() }
        self.trait = trait
        self.what = what
    }
}

/// The source families a build has: the registry behind `CMMotionManager.source(named:)`, the default
/// source and `CMAltimeter`'s barometers. Each family comes from the module that implements it; those a
/// package trait left out are listed as missing, so naming one says which trait to enable.
///
/// Immutable; safe from any thread.
package struct SourceCatalog: Sendable {
    /// The families present, in discovery order (the first whose ``SourceProvider/firstSource`` finds a
    /// device gives the default source).
    package let providers: [SourceProvider]
    /// The families left out by traits.
    package let missing: [MissingSourceFamily]

    /// A catalog of `providers`, with `missing` families left out by traits.
    package init(providers: [SourceProvider], missing: [MissingSourceFamily] = []) {
        self.providers = providers
        self.missing = missing
    }

    /// The provider answering to `spec`'s scheme, or `nil`.
    package func provider(for spec: String) -> SourceProvider? {
        let scheme = SourceSchemes.scheme(of: spec)
        return providers.first { $0.schemes.contains(scheme) }
    }

    /// The source `spec` names.
    /// - Throws: ``SourceError`` `.unavailable` for a scheme this build lacks (naming the trait that adds it)
    ///   or does not know (listing the known forms), or the provider's error.
    package func source(named spec: String, roots: SourceRoots = SourceRoots()) throws(SourceError) -> any SensorSource {
        if let provider = provider(for: spec) {
            return try provider.makeSource(spec, roots)
        }
        let scheme = SourceSchemes.scheme(of: spec)
        if let family = missing.first(where: { $0.schemes.contains(scheme) }) {
            throw SourceError(.unavailable, "'\(spec)': OpenCoreMotion was built without its \(family.trait) trait (\(family.what)); "
                              + "add \"\(family.trait)\" to the traits of the package dependency on OpenCoreMotion")
        }
        var known = providers.map(\.usage).joined(separator: ", ")
        if !missing.isEmpty {
            known += "; not in this build: " + missing.map { "\($0.schemes.joined(separator: "/")) (trait \($0.trait))" }.joined(separator: ", ")
        }
        throw SourceError(.unavailable, "unknown source '\(spec)'; expected \(known)")
    }

    /// The barometer `spec` names, or `nil` (unknown scheme, `none`, a family without pressure).
    package func barometer(named spec: String, roots: SourceRoots = SourceRoots()) -> (any BarometerSource)? {
        provider(for: spec)?.makeBarometer(spec, roots)
    }

    /// The first device any family finds without being named, in provider order, or `nil`.
    package func firstSource(roots: SourceRoots = SourceRoots()) -> (any SensorSource)? {
        for provider in providers {
            if let source = provider.firstSource(roots) { return source }
        }
        return nil
    }

    /// The first barometer any family finds without being named, in provider order, or `nil`.
    package func firstBarometer(roots: SourceRoots = SourceRoots()) -> (any BarometerSource)? {
        for provider in providers {
            if let barometer = provider.firstBarometer(roots) { return barometer }
        }
        return nil
    }
}
