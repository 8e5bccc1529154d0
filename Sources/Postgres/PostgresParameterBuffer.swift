import CLibPQ

/// Parameter values laid out as the C arrays libpq takes.
struct ParameterBuffer {
    /// Starts with one byte so the buffer always has an address, even for empty values.
    private var storage: [UInt8] = [0]
    /// Offset of each value in `storage`, or -1 for NULL.
    private var offsets: [Int] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []

    init(_ binds: [PostgresBind]) throws {
        for bind in binds {
            switch bind.value {
            case .null:
                offsets.append(-1)
                lengths.append(0)
                formats.append(0)
            case .text(let text):
                // Text parameters travel as C strings, so a NUL would silently cut the value.
                guard !text.utf8.contains(0) else {
                    throw PostgresError(
                        kind: .encoding, code: .characterNotInRepertoire,
                        message: "a text parameter contains a NUL byte"
                    )
                }
                offsets.append(storage.count)
                storage.append(contentsOf: text.utf8)
                storage.append(0)
                lengths.append(Int32(text.utf8.count))
                formats.append(0)
            case .binary(let bytes):
                offsets.append(storage.count)
                storage.append(contentsOf: bytes)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            }
        }
    }

    func withPointers<T>(_ body: ([UnsafePointer<CChar>?], [Int32], [Int32]) -> T) -> T {
        storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset < 0 ? nil : (base + offset).assumingMemoryBound(to: CChar.self)
            }
            return body(pointers, lengths, formats)
        }
    }
}
