/// How one channel is stored in an IIO buffer scan, from its `scan_elements/*_type` attribute.
///
/// Text form: `[be|le]:[s|u]bits/storagebits[Xrepeat]>>shift`, e.g. `le:s16/32>>0` (a signed
/// 16-bit value in a little-endian 32-bit slot) or `be:s12/16>>4`. Decoding reads `storagebits`
/// in the given byte order, shifts right by `shift`, keeps the low `bits` bits (the rest of the slot
/// may hold other data: the HID sensor hub copies the next report field into the upper half), and
/// sign-extends from bit `bits − 1` when signed.
package struct IIOScanType: Sendable, Hashable, CustomStringConvertible {
    /// `true` for big-endian storage.
    package var bigEndian: Bool
    /// `true` for two's-complement signed values.
    package var signed: Bool
    /// Significant bits, 1…64.
    package var bits: Int
    /// Bits of storage per element: 8, 16, 32 or 64.
    package var storageBits: Int
    /// Elements per channel (the `X` part), usually 1.
    package var repeatCount: Int
    /// Right shift applied before masking.
    package var shift: Int

    /// Creates a scan type.
    package init(bigEndian: Bool = false, signed: Bool, bits: Int, storageBits: Int, repeatCount: Int = 1, shift: Int = 0) {
        self.bigEndian = bigEndian
        self.signed = signed
        self.bits = bits
        self.storageBits = storageBits
        self.repeatCount = repeatCount
        self.shift = shift
    }

    /// Parses the `*_type` text; `nil` if malformed or if the sizes are inconsistent.
    package init?(parsing text: String) {
        let t = SysfsValue.trimmed(text)
        guard let colon = t.firstIndex(of: ":") else { return nil }
        let endian = t[..<colon]
        switch endian {
        case "be": bigEndian = true
        case "le": bigEndian = false
        default: return nil
        }
        var rest = t[t.index(after: colon)...]
        guard let sign = rest.first, sign == "s" || sign == "u" else { return nil }
        signed = sign == "s"
        rest = rest.dropFirst()
        guard let slash = rest.firstIndex(of: "/"), let b = Int(rest[..<slash]) else { return nil }
        bits = b
        rest = rest[rest.index(after: slash)...]
        guard let gt = rest.firstIndex(of: ">"), rest[rest.index(after: gt)...].first == ">" else { return nil }
        var storage = rest[..<gt]
        guard let sh = Int(rest[rest.index(gt, offsetBy: 2)...]) else { return nil }
        shift = sh
        repeatCount = 1
        if let x = storage.firstIndex(where: { $0 == "X" || $0 == "x" }) {
            // The kernel's scan_type.repeat is a u8: 1…255 (a huge count made a huge scan size).
            guard let r = Int(storage[storage.index(after: x)...]), (1...255).contains(r) else { return nil }
            repeatCount = r
            storage = storage[..<x]
        }
        guard let sb = Int(storage) else { return nil }
        storageBits = sb
        guard [8, 16, 32, 64].contains(storageBits), bits >= 1, bits <= storageBits, shift >= 0, shift < storageBits else {
            return nil
        }
    }

    /// Bytes one element occupies.
    package var storageBytes: Int { storageBits / 8 }

    /// Bytes the whole channel occupies in a scan (all repeats).
    package var totalBytes: Int { storageBytes * repeatCount }

    /// Decodes element `element` of the channel starting at `offset` in `scan`.
    @inlinable
    package func decode(_ scan: UnsafeRawBufferPointer, at offset: Int, element: Int = 0) -> Int64 {
        let n = storageBits / 8
        let start = offset + element * n
        var raw: UInt64 = 0
        if bigEndian {
            for i in 0..<n { raw = (raw << 8) | UInt64(scan[start + i]) }
        } else {
            for i in stride(from: n - 1, through: 0, by: -1) { raw = (raw << 8) | UInt64(scan[start + i]) }
        }
        raw >>= UInt64(shift)
        if bits < 64 { raw &= (UInt64(1) << UInt64(bits)) - 1 }
        if signed && bits < 64 && raw & (UInt64(1) << UInt64(bits - 1)) != 0 {
            raw |= ~((UInt64(1) << UInt64(bits)) - 1)
        }
        return Int64(bitPattern: raw)
    }

    /// The text form.
    package var description: String {
        "\(bigEndian ? "be" : "le"):\(signed ? "s" : "u")\(bits)/\(storageBits)\(repeatCount > 1 ? "X\(repeatCount)" : "")>>\(shift)"
    }
}

/// Where each enabled channel sits in one buffer scan.
///
/// Rules (the kernel's `iio_compute_scan_bytes`): enabled channels appear in `scan_index` order;
/// each starts at a multiple of its own size (storage bytes × repeat); the scan's total is padded
/// to a multiple of the largest channel size. The timestamp channel has the highest index, so it
/// comes last, 8-byte aligned.
package struct IIOScanLayout: Sendable, Hashable {
    /// One placed channel.
    package struct Slot: Sendable, Hashable {
        /// The channel's name without prefix and suffix, e.g. `accel_x` or `timestamp`.
        package var channel: String
        /// Its `scan_index`.
        package var index: Int
        /// How it is stored.
        package var type: IIOScanType
        /// Byte offset from the scan's start.
        package var offset: Int
    }

    /// The placed channels in scan order.
    package var slots: [Slot]
    /// Bytes per scan, padding included.
    package var scanSize: Int

    /// Places `channels` (name, scan index, type), which must be the enabled ones.
    package init(channels: [(name: String, index: Int, type: IIOScanType)]) {
        var offset = 0
        var largest = 1
        var slots: [Slot] = []
        for c in channels.sorted(by: { $0.index < $1.index }) {
            let size = c.type.totalBytes
            offset = (offset + size - 1) / size * size
            slots.append(Slot(channel: c.name, index: c.index, type: c.type, offset: offset))
            offset += size
            largest = max(largest, size)
        }
        self.slots = slots
        self.scanSize = slots.isEmpty ? 0 : (offset + largest - 1) / largest * largest
    }

    /// The slot of `channel`, if enabled.
    package func slot(_ channel: String) -> Slot? { slots.first { $0.channel == channel } }
}
