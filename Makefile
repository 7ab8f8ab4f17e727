.PHONY: build test bench lint

build:
	npm run build

test:
	npm test

bench:
	npm run bench

lint:
	npm run lint
