CREATE TABLE expense_report (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  submitter TEXT NOT NULL,
  status TEXT NOT NULL,
  reviewer_note TEXT
);
CREATE TABLE line_item (
  id INTEGER PRIMARY KEY,
  description TEXT NOT NULL,
  amount NUMERIC NOT NULL,
  spent_on DATE NOT NULL,
  billable BOOLEAN,
  report_id INTEGER NOT NULL REFERENCES expense_report(id)
);
