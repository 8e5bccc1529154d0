import ArgumentParser
import MockStock
print("x")
