"""tempfile and threads: workers write into a temporary directory, the main thread sums up."""

import os
import tempfile
from concurrent.futures import ThreadPoolExecutor


def work(directory: str, n: int) -> int:
    path = os.path.join(directory, f"part-{n}.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(str(n * n))
    with open(path, encoding="utf-8") as handle:
        return int(handle.read())


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        with ThreadPoolExecutor(max_workers=4) as pool:
            total = sum(pool.map(lambda n: work(directory, n), range(8)))
        with tempfile.NamedTemporaryFile("w+", suffix=".txt") as summary:
            summary.write(f"total={total}\n")
            summary.seek(0)
            print(summary.read().strip())


if __name__ == "__main__":
    main()
