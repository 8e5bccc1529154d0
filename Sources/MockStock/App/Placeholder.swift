import Hummingbird
import Prometheus
import Postgres
