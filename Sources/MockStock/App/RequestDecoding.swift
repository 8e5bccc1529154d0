import Foundation
import Hummingbird

extension Request {
    /// Decodes a JSON body: 400 `bad_request` when it is missing or not JSON, 422
    /// `validation_failed` naming the field when a value is missing or of the wrong type,
    /// 413 when it is over the size limit.
    func decodeJSON<T: Decodable>(as type: T.Type, context: AppRequestContext) async throws -> T {
        guard let body = try await decodeJSONIfPresent(as: type, context: context) else { throw AppError.badRequest("A JSON body is required.") }
        return body
    }

    /// The same for a route whose body may be left out: nil without one.
    func decodeJSONIfPresent<T: Decodable>(as type: T.Type, context: AppRequestContext) async throws -> T? {
        let buffer = try await body.collect(upTo: context.maxUploadSize)
        guard buffer.readableBytes > 0 else { return nil }
        let data = Data(buffer.readableBytesView)
        do {
            return try context.requestDecoder.decode(T.self, from: data)
        } catch DecodingError.dataCorrupted(let failure) where failure.codingPath.isEmpty {
            // Some value decoders (dates) report no path: well-formed JSON is then a bad value.
            guard (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil else {
                throw AppError.badRequest("The request body is not valid JSON.")
            }
            throw InvalidInput("A value in the body is not valid: \(failure.debugDescription)")
        } catch DecodingError.keyNotFound(let key, let failure) {
            throw InvalidInput("\(Self.field(failure.codingPath + [key])) is required.")
        } catch DecodingError.valueNotFound(_, let failure) {
            throw InvalidInput("\(Self.field(failure.codingPath)) must not be null.")
        } catch DecodingError.typeMismatch(_, let failure) {
            throw InvalidInput("\(Self.field(failure.codingPath)) has the wrong type.")
        } catch DecodingError.dataCorrupted(let failure) {
            throw InvalidInput("\(Self.field(failure.codingPath)) is not valid.")
        }
    }

    private static func field(_ path: [any CodingKey]) -> String {
        path.isEmpty ? "The body" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
