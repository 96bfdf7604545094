/// A three-component vector of `Double`, used for every sensor axis triple in the fusion core.
///
/// The unit depends on what the vector holds and is stated at each use: g for acceleration,
/// rad/s for rotation rate, µT for magnetic field. All operations are `@inlinable` value
/// arithmetic: no allocation, safe to use from any thread.
@frozen
public struct Vector3: Hashable, Sendable {
    /// First component.
    public var x: Double
    /// Second component.
    public var y: Double
    /// Third component.
    public var z: Double

    /// Creates a vector from its components.
    @inlinable
    public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// Creates a vector from labelled components.
    @inlinable
    public init(x: Double, y: Double, z: Double) {
        self.init(x, y, z)
    }

    /// The zero vector.
    public static let zero = Vector3(0, 0, 0)

    /// The Euclidean norm. Complexity: O(1).
    @inlinable public var length: Double { (x * x + y * y + z * z).squareRoot() }

    /// The squared Euclidean norm, cheaper than ``length`` when only comparisons are needed.
    @inlinable public var lengthSquared: Double { x * x + y * y + z * z }

    /// `true` when every component is finite (neither NaN nor infinite).
    @inlinable public var isFinite: Bool { x.isFinite && y.isFinite && z.isFinite }

    /// The vector scaled to unit length, or `nil` when its length is zero or not finite.
    @inlinable
    public var normalized: Vector3? {
        let n = length
        guard n > 0, n.isFinite else { return nil }
        return self / n
    }

    /// The dot product.
    @inlinable
    public func dot(_ o: Vector3) -> Double { x * o.x + y * o.y + z * o.z }

    /// The cross product `self × o` (right-handed).
    @inlinable
    public func cross(_ o: Vector3) -> Vector3 {
        Vector3(y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x)
    }

    @inlinable public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    @inlinable public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
    @inlinable public static prefix func - (a: Vector3) -> Vector3 { Vector3(-a.x, -a.y, -a.z) }
    @inlinable public static func * (a: Vector3, s: Double) -> Vector3 { Vector3(a.x * s, a.y * s, a.z * s) }
    @inlinable public static func * (s: Double, a: Vector3) -> Vector3 { Vector3(a.x * s, a.y * s, a.z * s) }
    @inlinable public static func / (a: Vector3, s: Double) -> Vector3 { Vector3(a.x / s, a.y / s, a.z / s) }
    @inlinable public static func += (a: inout Vector3, b: Vector3) { a = a + b }
    @inlinable public static func -= (a: inout Vector3, b: Vector3) { a = a - b }
    @inlinable public static func *= (a: inout Vector3, s: Double) { a = a * s }
}
