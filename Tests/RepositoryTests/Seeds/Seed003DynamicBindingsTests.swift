import Dispatch
import Foundation
import Repository
import Testing

/// Seed 003: "Bindings, Generics, Swift and MVVM" (`../shared/seeds/003_*`). Its `Dynamic<T>` is
/// a `Var<T>`: `bind` is `observe`, `bindAndFire` is `observe(initial: true)`, and `println` is a
/// recorded line. A `UILabel` is a main-actor `Label`, bound with `observeOnMainActor`, whose
/// updates arrive through the main queue (the tests drain it).
///
/// Not run, being the article's implementation of `Dynamic` rather than a use of it: the
/// `DynamicString` class listings (with `didSet`, `listener`, `bind`, `bindAndFire`) and the
/// generic `class Dynamic<T>`. Their uses below run.
@Suite("Seed 003: Dynamic's bind and bindAndFire")
struct Seed003DynamicBindingsTests {
    @MainActor final class Label {
        var text: String?
    }

    @Test("a DynamicString prints nothing when made, and \"did set value to Tim\" when set")
    func didSetPrints() {
        let printed = Recorder<String>()
        let name = Var("Steve")                             // does not print anything
        let subscription = name.observe { printed.append("did set value to \($0.new)") }
        #expect(name.value == "Steve")
        name.value = "Tim"
        #expect(printed.all == ["did set value to Tim"] && name.value == "Tim")
        subscription.cancel()
    }

    /// `name.bind({ value in println(value) })`, and the same with a trailing closure and `$0`.
    @Test("bind: each new value printed, Tim then Groot")
    func bindPrints() {
        let name = Var("Steve")
        let printed = Recorder<String>()
        let subscription = name.observe { printed.append($0.new) }
        name.value = "Tim"
        name.value = "Groot"
        #expect(printed.all == ["Tim", "Groot"])
        subscription.cancel()
    }

    /// `name.bind { nameLabel.text = $0 }` — "the first time? where did Steve go?" — and the
    /// article's fix, `name.bindAndFire { nameLabel.text = $0 }`.
    @Test("bind leaves the label nil until the first set; bindAndFire shows Steve at once")
    @MainActor func bindAndBindAndFireLabels() async {
        let name = Var("Steve")
        let boundLabel = Label(), firedLabel = Label()
        let subscriptions = [name.observeOnMainActor { boundLabel.text = $0.new },
                             name.observeOnMainActor(initial: true) { firedLabel.text = $0.new }]
        await drain(.main)
        #expect(boundLabel.text == nil && firedLabel.text == "Steve")
        for text in ["Tim", "Groot"] {
            name.value = text
            await drain(.main)
            #expect(boundLabel.text == text && firedLabel.text == text)
        }
        subscriptions.forEach { $0.cancel() }
    }

    @Test("Dynamic of any type, the type inferred; a second listener does not replace the first")
    func genericDynamic() {
        let name = Var<String>("Steve"), alive = Var<Bool>(false), products = Var<[String]>(["Macintosh", "iPod", "iPhone"])
        let inferredName = Var("Steve"), inferredAlive = Var(false), inferredProducts = Var(["Macintosh", "iPod", "iPhone"])
        #expect(type(of: inferredName) == type(of: name) && type(of: inferredAlive) == type(of: alive))
        #expect(type(of: inferredProducts) == type(of: products) && !alive.value && name.value == "Steve")
        let printed = Recorder<String>(), second = Recorder<Bool>()
        let subscriptions = [
            products.observe(initial: true) { printed.append("First product is \(String(describing: $0.new.first))") },
            products.observe { _ in second.append(true) },
        ]
        products.value.insert("Apple II", at: 0)
        #expect(printed.all == [#"First product is Optional("Macintosh")"#, #"First product is Optional("Apple II")"#])
        #expect(second.count == 1)
        subscriptions.forEach { $0.cancel() }
    }

    // MARK: - The MVVM example

    struct Image: Equatable, Sendable {
        var data: Data
    }

    struct Article: Sendable {
        var title: String
        var body: String
        var date: Date
        var thumbnail: URL
    }

    protocol ArticleViewViewModel {
        var title: Var<String> { get }
        var body: Var<String> { get }
        var date: Var<String> { get }
        var thumbnail: Var<Image?> { get }
    }

    /// The view model: constant `Var`s set in the initializer, the thumbnail nil until its
    /// download (here `download`, standing for `NSURLSession`'s task) delivers it.
    final class ArticleViewViewModelFromArticle: ArticleViewViewModel, Sendable {
        let article: Article
        let title: Var<String>
        let body: Var<String>
        let date: Var<String>
        let thumbnail: Var<Image?>

        init(_ article: Article, download: @escaping @Sendable (URL) async -> Data?) {
            self.article = article
            title = Var(article.title)
            body = Var(article.body)
            let dateFormatter = DateFormatter()
            dateFormatter.locale = Locale(identifier: "en_US_POSIX")
            dateFormatter.timeZone = TimeZone(identifier: "UTC")
            dateFormatter.dateStyle = .short
            date = Var(dateFormatter.string(from: article.date))
            thumbnail = Var(nil)
            Task { [weak self] in
                if let data = await download(article.thumbnail) {
                    self?.thumbnail.value = Image(data: data)
                }
            }
        }
    }

    @MainActor final class ArticleViewController {
        let bodyTextView = Label(), titleLabel = Label(), dateLabel = Label()
        var thumbnailImageView: Image?
        private var bindings = Set<Subscription>()

        var viewModel: (any ArticleViewViewModel)? {
            didSet {
                bindings.removeAll()
                guard let viewModel else { return }
                viewModel.title.observeOnMainActor(initial: true) { [unowned self] in self.titleLabel.text = $0.new }.store(in: &bindings)
                viewModel.body.observeOnMainActor(initial: true) { [unowned self] in self.bodyTextView.text = $0.new }.store(in: &bindings)
                viewModel.date.observeOnMainActor(initial: true) { [unowned self] in self.dateLabel.text = $0.new }.store(in: &bindings)
                viewModel.thumbnail.observeOnMainActor(initial: true) { [unowned self] in self.thumbnailImageView = $0.new }.store(in: &bindings)
            }
        }
    }

    @Test("the article view controller shows the view model at once, and the thumbnail when it arrives",
          .timeLimit(.minutes(5)))
    @MainActor func articleViewController() async throws {
        let (downloaded, download) = AsyncStream.makeStream(of: Data.self)
        let article = Article(title: "Bindings", body: "Generics, Swift and MVVM", date: Date(timeIntervalSince1970: 1_426_291_200),
                              thumbnail: URL(string: "https://example.com/thumbnail.png")!)
        let viewModel = ArticleViewViewModelFromArticle(article) { _ in await downloaded.first { _ in true } }
        let viewController = ArticleViewController()
        viewController.viewModel = viewModel
        await drain(.main)
        #expect(viewController.titleLabel.text == "Bindings" && viewController.bodyTextView.text == "Generics, Swift and MVVM")
        #expect(viewController.dateLabel.text == "3/14/15" && viewController.thumbnailImageView == nil)
        download.yield(Data([0x89, 0x50, 0x4E, 0x47]))
        for await thumbnail in viewModel.thumbnail.values where thumbnail != nil { break }
        await drain(.main)                                  // the binding queued its update before
        #expect(viewController.thumbnailImageView == Image(data: Data([0x89, 0x50, 0x4E, 0x47])))
        viewModel.title.value = "Bindings, again"
        await drain(.main)
        #expect(viewController.titleLabel.text == "Bindings, again")
    }
}
