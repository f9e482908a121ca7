CREATE TABLE conversation (
  id INTEGER PRIMARY KEY,
  topic TEXT NOT NULL
);
CREATE TABLE message (
  id INTEGER PRIMARY KEY,
  author TEXT NOT NULL,
  body TEXT NOT NULL,
  conversation_id INTEGER NOT NULL REFERENCES conversation(id)
);
