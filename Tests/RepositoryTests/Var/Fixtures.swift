import IdentifiedCollections

struct Address: Equatable, Sendable {
    var street: String
    var city: String
}

struct Person: Identifiable, Equatable, Sendable {
    var id: Int
    var name: String
    var address: Address
}

func makeBook() -> IdentifiedArrayOf<Person> {
    [
        Person(id: 1, name: "Ada", address: Address(street: "1 Analytical Way", city: "London")),
        Person(id: 2, name: "Grace", address: Address(street: "2 Compiler Road", city: "Arlington")),
        Person(id: 3, name: "Edsger", address: Address(street: "3 Goto Lane", city: "Austin")),
    ]
}
