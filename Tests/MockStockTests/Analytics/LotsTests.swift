import Foundation
@testable import MockStock
import Testing

@Suite("Cost lots")
struct LotsTests {
    @Test("a split scales the lots' shares and keeps their cost; later sales take the scaled shares")
    func splits() {
        var fifo = Lots(method: .fifo)
        fifo.buy("AAPL", shares: 10, cost: 1000)
        fifo.split("AAPL", before: 10, after: 40)
        fifo.sell("AAPL", shares: 20, proceeds: 700)
        // 20 of 40 shares that cost 1,000: 500.
        #expect(fifo.realized["AAPL"] == 200 && fifo.shares("AAPL") == 20 && fifo.amount("AAPL") == 500)

        var lifo = Lots(method: .lifo)
        lifo.buy("X", shares: 10, cost: 1000)
        lifo.buy("X", shares: 10, cost: 1200)
        lifo.split("X", before: 20, after: 30)
        lifo.sell("X", shares: 15, proceeds: 2000)
        // The newer lot, now 15 shares, cost 1,200.
        #expect(lifo.realized["X"] == 800 && lifo.shares("X") == 15 && lifo.amount("X") == 1000)
    }

    @Test("a sale beyond the shares held opens a short lot, which a later buy closes with its gain")
    func shorts() {
        for method in CostMethod.allCases {
            var lots = Lots(method: method)
            lots.buy("S", shares: 2, cost: 200)
            lots.sell("S", shares: 7, proceeds: 770)
            // 2 long shares sold for 220 (cost 200); 5 short at 110 each.
            #expect(lots.realized["S"] == 20 && lots.shares("S") == -5 && lots.amount("S") == 550, "\(method)")
            lots.buy("S", shares: 5, cost: 400)
            #expect(lots.realized["S"] == 170 && lots.shares("S") == 0, "\(method)")
        }
    }
}
