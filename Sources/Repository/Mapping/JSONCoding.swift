import Foundation

/// The JSON coders used for `json`/`jsonb` columns: sorted keys, and dates exact to the
/// microsecond — as a `timestamptz` column holds them — in ISO 8601 (`2024-02-29T13:45:06.123457Z`;
/// `infinity` for `Date.distantFuture`). Dates are read from ISO 8601 with any number of
/// fraction digits and any offset, or PostgreSQL's own text (`to_jsonb(now())`).
enum JSONCoding {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(TimestampFormat.iso8601(from: date))
        }
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = TimestampFormat.date(parsing: text) { return date }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected an ISO-8601 date that a Date holds to the microsecond, found \(text)")
        }
        return decoder
    }
}
