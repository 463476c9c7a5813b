import AddressBookKit
import ArgumentParser
import Foundation
import Repository

// Every edit goes through live handles, as an application would: read the person, change the
// value, await `save()`.

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a person, with addresses.")
    @Argument(help: "The person's name.") var name: String
    @Option(name: .long, help: "An address (repeat for more).") var street: [String] = []
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let name = try Input.text(name, "name")
        let streets = try street.map { try Input.text($0, "street") }
        try await DemoSession.run { session in
            let person = try await session.book.addPerson(name: name, streets: streets)
            Output.person(person.value, json: output.json)
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List everyone.")
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await DemoSession.run { session in
            Output.people(try await session.book.people().value.elements, json: output.json)
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a person and their addresses.")
    @Argument(help: "The person's id.") var id: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let id = try Input.personID(id)
        try await DemoSession.run { session in
            Output.person(try await session.person(id).value, json: output.json)
        }
    }
}

struct Rename: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Rename a person.")
    @Argument(help: "The person's id.") var id: String
    @Argument(help: "The new name.") var name: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let name = try Input.text(name, "name")
        try await DemoSession.edit(Input.personID(id), json: output.json) { person in
            person[\.name].value = name
        }
    }
}

struct AddAddress: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add-address", abstract: "Add an address to a person.")
    @Argument(help: "The person's id.") var id: String
    @Argument(help: "The street address.") var street: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let street = try Input.text(street, "street")
        try await DemoSession.edit(Input.personID(id), json: output.json) { person in
            person[\.addresses].value.append(Address(street: street))
        }
    }
}

struct RemoveAddress: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove-address", abstract: "Remove one of a person's addresses.")
    @Argument(help: "The person's id.") var id: String
    @Argument(help: "The address id, or a unique prefix of it (as `show` prints it).") var addressID: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await DemoSession.edit(Input.personID(id), json: output.json) { person in
            let address = try Input.address(addressID, of: person.value)
            person[\.addresses].value.removeAll { $0.id == address }
        }
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a person and their addresses.")
    @Argument(help: "The person's id.") var id: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let id = try Input.personID(id)
        try await DemoSession.run { session in
            try await session.book.deletePerson(id: id)
            Output.deleted(id, json: output.json)
        }
    }
}

/// Checks what the user typed, with one-line errors.
enum Input {
    static func personID(_ text: String) throws -> Int64 {
        guard let id = Int64(text), id > 0 else { throw DemoError("'\(text)' is not a person id (a positive number, as `demo list` shows)") }
        return id
    }

    static func text(_ text: String, _ what: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw DemoError("the \(what) must not be empty") }
        return trimmed
    }

    /// The address whose id is `text` or starts with it.
    static func address(_ text: String, of person: Person) throws -> UUID {
        let prefix = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard !prefix.isEmpty else { throw DemoError("the address id must not be empty (give it, or a unique prefix, as `demo show \(person.id)` prints it)") }
        let matches = person.addresses.filter { $0.id.uuidString.lowercased().hasPrefix(prefix) }
        guard let match = matches.first else {
            throw AddressBookError.noSuchAddress(person: person.id, address: text)
        }
        guard matches.count == 1 else { throw DemoError("'\(text)' matches several addresses of person \(person.id); give more of the id") }
        return match.id
    }
}
