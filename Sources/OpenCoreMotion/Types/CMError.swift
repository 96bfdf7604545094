import Foundation

/// The error domain of every error OpenCoreMotion reports, as Core Motion's `CMErrorDomain`.
///
/// Errors reach handlers as `NSError(domain: CMErrorDomain, code: Int(CMError….rawValue))`, with a
/// one-line explanation under `NSLocalizedDescriptionKey` and, where a file is involved, its path
/// under `NSFilePathErrorKey` and the line under ``CMErrorLineNumberKey``.
public let CMErrorDomain: String = "CMErrorDomain"

/// The `userInfo` key holding the 1-based line of the input an error is about (beyond Apple).
public let CMErrorLineNumberKey: String = "CMErrorLineNumber"

/// A Core Motion error code, imported the way Swift imports Apple's C enum `CMError`.
public struct CMError: RawRepresentable, Equatable, Hashable, Sendable {
    /// The numeric code, as in Apple's `CMError.h`.
    public var rawValue: UInt32
    /// Creates a code from its number.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Creates a code from its number.
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
}

/// No error (100).
public let CMErrorNULL = CMError(100)
/// The device must move before calibration can finish (101): sent once with `showsDeviceMovementDisplay`.
public let CMErrorDeviceRequiresMovement = CMError(101)
/// True north is not available: no location has been set (102).
public let CMErrorTrueNorthNotAvailable = CMError(102)
/// An unknown error (103): a source failed in a way no other code describes, such as a malformed recording.
public let CMErrorUnknown = CMError(103)
/// Motion activity is not available (104).
public let CMErrorMotionActivityNotAvailable = CMError(104)
/// Motion activity is not authorized (105).
public let CMErrorMotionActivityNotAuthorized = CMError(105)
/// Motion activity is not entitled (106).
public let CMErrorMotionActivityNotEntitled = CMError(106)
/// An invalid parameter was given (107).
public let CMErrorInvalidParameter = CMError(107)
/// An invalid action was requested (108).
public let CMErrorInvalidAction = CMError(108)
/// The feature or device is not available (109): also reported when a device disappears mid-stream.
public let CMErrorNotAvailable = CMError(109)
/// Not entitled (110).
public let CMErrorNotEntitled = CMError(110)
/// Not authorized (111): the process may not open the device; the message names the file and the fix.
public let CMErrorNotAuthorized = CMError(111)
/// The data was nil (112).
public let CMErrorNilData = CMError(112)
/// The data has the wrong size (113).
public let CMErrorSize = CMError(113)

extension NSError {
    /// An error in ``CMErrorDomain`` with the given code and explanation.
    static func coreMotion(_ code: CMError, _ message: String, path: String? = nil, line: Int? = nil) -> NSError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let path { info[NSFilePathErrorKey] = path }
        if let line { info[CMErrorLineNumberKey] = line }
        return NSError(domain: CMErrorDomain, code: Int(code.rawValue), userInfo: info)
    }
}
